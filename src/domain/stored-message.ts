import type { Message, Subscriber } from './types.js';

/** The Message fields a stored message keeps in columns; every other field lives in its JSON document. */
export type MessageColumnFields = Pick<
  Message,
  | '_id'
  | '_environmentId'
  | '_organizationId'
  | '_notificationId'
  | '_subscriberId'
  | '_jobId'
  | '_templateId'
  | 'transactionId'
  | 'channel'
  | 'read'
  | 'seen'
  | 'status'
  | 'deleted'
  | 'archived'
  | 'createdAt'
  | 'updatedAt'
>;

/**
 * A message as the list reads it: its column fields, and the rest still as the stored JSON text of its document, so
 * a page can be written out without parsing and re-serialising every message (issue 24). Documents are always
 * written by JSON.stringify (the store's toJson), which the list's writer relies on.
 * `columns` holds exactly the fields a column sets: a key that is absent (`archived` of a message that is not in-app)
 * is read from the document, as in `messageOf`.
 */
export interface StoredMessage {
  columns: MessageColumnFields;
  /**
   * The JSON text of the document (the Message's other fields); null when there is none. '' when the list text holds
   * them (see documentOfText): the row keeps one copy of those fields, not two.
   */
  document: string | null;
  /** The message's list text (MessageText), where the row has one. */
  text?: string | null;
  /** The subscriber record, when the caller looked it up; it takes the place of any stored copy. */
  subscriber?: Subscriber;
  /**
   * The JSON text of the workflow snapshot the document references (`"template":"snapshot:<id>"`, see
   * TEMPLATE_SNAPSHOT_PREFIX), when it references one.
   */
  template?: string;
}

/**
 * A message of a `GET /v1/messages` page as the store reads it: its stored response text when it has one (see
 * `MessageText`), otherwise its columns and document.
 */
export interface ListedMessage {
  /** The internal id of its subscriber, whose record the page looks up. */
  subscriberRecordId: string;
  /** The message's list text (`MessageText`), for rows that have one. */
  text?: string;
  /** The stored message, for rows without a text. */
  stored?: StoredMessage;
  /** The subscriber record, when the caller looked it up. */
  subscriber?: Subscriber;
  /** The text of the workflow snapshot its list text references (MESSAGE_TEXT_TEMPLATE), when it references one. */
  template?: string;
}

/**
 * Writes a stored message's list text: the message as `GET /v1/messages` writes it, with every field but its
 * subscriber, and MESSAGE_TEXT_SUBSCRIBER where the subscriber record goes. The store keeps it with the message and
 * rewrites it on every write of the message (issue 24). Undefined when it cannot write one: the row then has none.
 */
export type MessageText = (stored: StoredMessage) => string | undefined;

/**
 * A stored message's list text (as MessageText), and whether it gives back every field of the document: the row then
 * keeps the text alone and reads the document's fields from it (issue 24, data size).
 */
export type MessageTextHoldingDocument = (stored: StoredMessage) => { text: string; holdsDocument: boolean } | undefined;

/** Where a list text takes the subscriber record: a character that compact JSON never holds raw (it is escaped). */
export const MESSAGE_TEXT_SUBSCRIBER = '\u0001';

/**
 * Where a list text takes the message's workflow snapshot: this character, then the snapshot's id
 * (TEMPLATE_SNAPSHOT_ID_LENGTH characters), standing for `,"template":<the snapshot's text>` (issue 24, data size).
 */
export const MESSAGE_TEXT_TEMPLATE = '\u0002';

/**
 * A stored document's `template` when the message references a kept snapshot (MessageTemplatesTable) instead of
 * holding it: this prefix, then the snapshot's id.
 */
export const TEMPLATE_SNAPSHOT_PREFIX = 'snapshot:';
export const TEMPLATE_SNAPSHOT_ID_LENGTH = 32;

/** The snapshot id a stored document's `template` value references, or undefined when it holds no reference. */
export function templateSnapshotId(value: unknown): string | undefined {
  return typeof value === 'string' && value.startsWith(TEMPLATE_SNAPSHOT_PREFIX) ? value.slice(TEMPLATE_SNAPSHOT_PREFIX.length) : undefined;
}

/**
 * A list text read back as an object: every field the list writes (the document's and the columns'), the workflow
 * snapshot as its reference (`"snapshot:<id>"`, as in a document), no subscriber.
 */
export function documentOfText(text: string): Record<string, unknown> {
  return JSON.parse(listTextJson(text)) as Record<string, unknown>;
}

/** A list text as compact JSON: without its subscriber mark, its snapshot mark as the reference a document holds. */
export function listTextJson(text: string): string {
  const json = text.replace(MESSAGE_TEXT_SUBSCRIBER, '');
  const at = json.indexOf(MESSAGE_TEXT_TEMPLATE);
  if (at < 0) return json;
  const id = json.slice(at + 1, at + 1 + TEMPLATE_SNAPSHOT_ID_LENGTH);
  return `${json.slice(0, at)},"template":"${TEMPLATE_SNAPSHOT_PREFIX}${id}"${json.slice(at + 1 + TEMPLATE_SNAPSHOT_ID_LENGTH)}`;
}

/** Document fields that read as a default when the document lacks them or holds null (messageOf's `??=`). */
export const DOCUMENT_DEFAULTS: Readonly<Partial<Record<keyof Message, unknown>>> = Object.freeze({ cta: Object.freeze({}) });

/**
 * The Message a stored one stands for: the document, with the columns (and the looked-up subscriber) over it. The
 * fields are set one by one, in this order, so a Message's keys keep the order they always had.
 */
export function messageOf(stored: StoredMessage): Message {
  // The parsed document is a fresh object: the columns are written onto it rather than both copied into a new one.
  const message = (stored.document ? JSON.parse(stored.document) : stored.document === '' && stored.text ? documentOfText(stored.text) : {}) as Message;
  const columns = stored.columns;
  message._id = columns._id;
  message._environmentId = columns._environmentId;
  message._organizationId = columns._organizationId;
  message._notificationId = columns._notificationId;
  message._subscriberId = columns._subscriberId;
  message._jobId = columns._jobId;
  message._templateId = columns._templateId;
  message.transactionId = columns.transactionId;
  message.channel = columns.channel;
  message.read = columns.read;
  message.seen = columns.seen;
  message.status = columns.status;
  message.cta ??= {};
  message.deleted = columns.deleted;
  if (columns.archived !== undefined) message.archived = columns.archived;
  message.createdAt = columns.createdAt;
  message.updatedAt = columns.updatedAt;
  if (stored.subscriber !== undefined) message.subscriber = stored.subscriber;
  // A referenced snapshot takes the reference's place (same key position): each message gets its own parsed copy.
  if (stored.template !== undefined && templateSnapshotId(message.template) !== undefined) message.template = JSON.parse(stored.template);
  return message;
}
