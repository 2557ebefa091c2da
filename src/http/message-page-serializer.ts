import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import {
  DOCUMENT_DEFAULTS,
  MESSAGE_TEXT_SUBSCRIBER,
  MESSAGE_TEXT_TEMPLATE,
  messageOf,
  TEMPLATE_SNAPSHOT_ID_LENGTH,
  TEMPLATE_SNAPSHOT_PREFIX,
  type ListedMessage,
  type StoredMessage,
} from '../domain/stored-message.js';
import type { Page, Subscriber } from '../domain/types.js';
import { PageEnvelope } from './schemas/common.js';
import { MessageSchema } from './schemas/message.js';
import { readJsonFields } from './json-fields.js';

/**
 * Writes a page of `GET /v1/messages` from stored messages, byte for byte what the route's schema serializer
 * (fast-json-stringify over `PageEnvelope(MessageSchema)`) writes for the same page of parsed Messages, without parsing
 * the stored documents and re-serialising them (issue 24: that was most of the list's CPU).
 *
 * fast-json-stringify writes an object's declared properties, required ones first and then the others, each in schema
 * order, skipping undefined values; a value's text depends only on the value and its property's schema. So a message
 * is written property by property in that order, each value taken from where `messageOf` would take it: a column, the
 * looked-up subscriber, or the document's raw text. A value is written by the same generated serializer as before,
 * compiled for its property alone, except where its raw stored text is already that output:
 * - a string property whose stored value is a JSON string: JSON.stringify wrote it, and the serializer's string
 *   escaping gives the same text as JSON.stringify (test/http/message-page-serializer.test.ts checks both);
 * - a free-form object (`additionalProperties: true`, no declared properties) whose stored value is an object: the
 *   serializer writes each key with JSON.stringify of its value, the text JSON.stringify wrote.
 * Each subscriber record is written once per page (a subscriber's page repeats it on every message). A document this
 * cannot read (not compact JSON) is parsed, and its message written by the whole-message serializer.
 */
export function serializeMessagePage(page: Page<ListedMessage>): string {
  const writer = new PageWriter();
  const envelope = envelopeAround(page);
  let json = envelope.head;
  for (let index = 0; index < page.data.length; index++) {
    if (index > 0) json += ',';
    const listed = page.data[index]!;
    const text = listed.text;
    if (text === undefined) {
      json += writer.message(listed.stored!, listed.subscriber, false);
      continue;
    }
    // A stored list text (messageListText): the subscriber record goes in, and the workflow snapshot it references.
    const at = text.indexOf(MESSAGE_TEXT_SUBSCRIBER);
    if (at < 0) throw new Error('message serializer: a list text without its subscriber mark');
    const subscriber = listed.subscriber !== undefined ? SUBSCRIBER_KEY + writer.subscriber(listed.subscriber) : '';
    const snapshotAt = text.indexOf(MESSAGE_TEXT_TEMPLATE);
    if (snapshotAt < 0) {
      json += text.slice(0, at) + subscriber + text.slice(at + 1);
      continue;
    }
    if (listed.template === undefined) throw new Error('message serializer: a list text without its workflow snapshot');
    const template = TEMPLATE_KEY + listed.template;
    const snapshotEnd = snapshotAt + 1 + TEMPLATE_SNAPSHOT_ID_LENGTH;
    json +=
      at < snapshotAt
        ? text.slice(0, at) + subscriber + text.slice(at + 1, snapshotAt) + template + text.slice(snapshotEnd)
        : text.slice(0, snapshotAt) + template + text.slice(snapshotEnd, at) + subscriber + text.slice(at + 1);
  }
  return json + envelope.tail;
}

/**
 * A stored message's list text (MessageText): what serializeMessagePage writes for it, less its subscriber record,
 * with MESSAGE_TEXT_SUBSCRIBER in its place. Written by the same code as a page, so a page from texts is byte for byte
 * a page from the columns. Undefined for a message it cannot write so (a document this cannot read or holding a copy of
 * its subscriber, a value its schema refuses): the list then writes it from the columns.
 */
export function messageListText(stored: StoredMessage): string | undefined {
  try {
    return new PageWriter().message(stored, undefined, true);
  } catch {
    // A value its schema cannot write: the message is written as before, and its list page refuses it as before.
    return undefined;
  }
}

/**
 * MessageTextHoldingDocument: the list text (messageListText), and whether it holds the whole document: every
 * top-level document field was written into it as its stored JSON text, byte for byte, and the document has no other
 * field. Found while writing (no second pass): the schema the text is written by drops undeclared keys inside some
 * fields (cta, content blocks) or writes them in its own order, and ignores undeclared top-level keys; such a message
 * keeps its document.
 */
export function messageListTextHoldingDocument(stored: StoredMessage): { text: string; holdsDocument: boolean } | undefined {
  try {
    const writer = new PageWriter();
    const text = writer.message(stored, undefined, true);
    return text === undefined ? undefined : { text, holdsDocument: writer.holdsDocument };
  } catch {
    return undefined;
  }
}

type ValueSerializer = (value: unknown) => string;

const compile = SerializerSelector()({}, undefined);
const serializerOf = (schema: TSchema): ValueSerializer =>
  compile({ schema, method: 'GET', url: '/v1/messages', httpStatus: '200' } as never) as ValueSerializer;

/** The text fast-json-stringify writes for `value` as property `name` of schema `schema`. */
function propertySerializer(name: string, schema: TSchema): ValueSerializer {
  const wrapped = serializerOf(Type.Object({ [name]: schema }));
  const prefix = `{${JSON.stringify(name)}:`;
  return (value) => {
    const text = wrapped({ [name]: value });
    if (!text.startsWith(prefix) || !text.endsWith('}')) throw new Error(`message serializer: unexpected output for ${name}`);
    return text.slice(prefix.length, -1);
  };
}

type Source = 'column' | 'subscriber' | 'document';

interface PropertyPlan {
  name: string;
  /** `"name":` */
  key: string;
  source: Source;
  /** Raw stored text that is already the output: a JSON string (`"`), a JSON object (`{`), or none. */
  rawWhenStartsWith?: '"' | '{';
  serialize: ValueSerializer;
  /** Outputs of short raw texts (`{}`, `null`, `[]`, `false`, enum strings), computed once. */
  memo: Map<string, string>;
  defaultText?: string;
  /** The last string column value written, and its text. */
  lastString: string;
  lastStringText: string;
}

const COLUMN_NAMES = new Set([
  '_id', '_environmentId', '_organizationId', '_notificationId', '_subscriberId', '_jobId', '_templateId', 'transactionId',
  'channel', 'read', 'seen', 'status', 'deleted', 'archived', 'createdAt', 'updatedAt',
]);
const MEMO_MAX_TEXT = 64;
const MEMO_MAX_ENTRIES = 256;

/** A string (or nullable string) property: a string value is written as JSON.stringify writes it. */
function isPlainString(schema: TSchema): boolean {
  return schema.type === 'string' || (Array.isArray(schema.type) && schema.type.length === 2 && schema.type.includes('string') && schema.type.includes('null'));
}

/** A union whose only branch taking strings is a plain string: a string value is written as that branch writes it. */
function isStringUnion(schema: TSchema): boolean {
  const branches = (schema.anyOf ?? schema.oneOf) as TSchema[] | undefined;
  if (!branches) return false;
  const takingStrings = branches.filter((branch) => branch.type === undefined || branch.type === 'string' || (Array.isArray(branch.type) && branch.type.includes('string')));
  return takingStrings.length === 1 && takingStrings[0]!.type === 'string' && Object.keys(takingStrings[0]!).every((key) => key === 'type' || key === 'description');
}

function isFreeObject(schema: TSchema): boolean {
  return schema.type === 'object' && schema.additionalProperties === true && Object.keys(schema.properties ?? {}).length === 0 && !schema.patternProperties;
}

function planOf(schema: TObject): PropertyPlan[] {
  const required = new Set(schema.required ?? []);
  const names = Object.keys(schema.properties);
  // fast-json-stringify's order: required properties first, each group in schema order (a stable sort).
  const ordered = [...names.filter((name) => required.has(name)), ...names.filter((name) => !required.has(name))];
  if (!required.has(ordered[0]!)) throw new Error('message serializer: the first property must be required');
  return ordered.map((name) => {
    const property = schema.properties[name]!;
    const serialize = propertySerializer(name, property);
    const defaultValue = DOCUMENT_DEFAULTS[name as keyof typeof DOCUMENT_DEFAULTS];
    return {
      name,
      key: `${JSON.stringify(name)}:`,
      source: COLUMN_NAMES.has(name) ? 'column' : name === 'subscriber' ? 'subscriber' : 'document',
      rawWhenStartsWith: isPlainString(property) || isStringUnion(property) ? '"' : isFreeObject(property) ? '{' : undefined,
      serialize,
      memo: new Map(),
      lastString: '',
      lastStringText: '""',
      ...(defaultValue !== undefined ? { defaultText: serialize(defaultValue) } : {}),
    };
  });
}

const MESSAGE_PLAN = planOf(MessageSchema);
/** A property's name → its index in MESSAGE_PLAN, where readJsonFields puts its document value. */
const PLAN_SLOTS = new Map(MESSAGE_PLAN.map((plan, slot) => [plan.name, slot]));
const SUBSCRIBER_PROPERTY = MessageSchema.properties.subscriber;
const serializeSubscriber = propertySerializer('subscriber', SUBSCRIBER_PROPERTY);
const serializeWholeMessage = serializerOf(MessageSchema);
const serializeEnvelope = serializerOf(PageEnvelope(MessageSchema, { totalCount: true }));
const EMPTY_DATA = '"data":[]';
const SUBSCRIBER_KEY = ',"subscriber":';
/** What MESSAGE_TEXT_TEMPLATE and its id stand for, before the snapshot's text (`template` is never the first key). */
const TEMPLATE_KEY = ',"template":';
/** A document's `template` that references a kept snapshot, as its raw JSON text starts. */
const SNAPSHOT_REFERENCE = `"${TEMPLATE_SNAPSHOT_PREFIX}`;

/**
 * The page's envelope as its schema writes it with no messages, split inside its empty `data` array: wherever the
 * schema puts `data`, the messages go there. (Inside a JSON string every `"` is escaped, so the unescaped key found is
 * the envelope's own.)
 */
function envelopeAround(page: Page<unknown>): { head: string; tail: string } {
  const text = serializeEnvelope({ ...page, data: [] });
  const at = text.indexOf(EMPTY_DATA);
  if (at < 0) throw new Error('message serializer: unexpected page envelope');
  const inside = at + EMPTY_DATA.length - 1;
  return { head: text.slice(0, inside), tail: text.slice(inside) };
}

function fromRaw(plan: PropertyPlan, raw: string): string {
  if (plan.rawWhenStartsWith !== undefined && raw.charAt(0) === plan.rawWhenStartsWith) return raw;
  if (raw.length > MEMO_MAX_TEXT) return plan.serialize(JSON.parse(raw));
  let text = plan.memo.get(raw);
  if (text === undefined) {
    text = plan.serialize(JSON.parse(raw));
    if (plan.memo.size < MEMO_MAX_ENTRIES) plan.memo.set(raw, text);
  }
  return text;
}

function fromColumn(plan: PropertyPlan, value: unknown): string {
  if (typeof value === 'string' && plan.rawWhenStartsWith === '"') {
    // Most column values repeat from one message to the next on a page (environment, subscriber, channel, status).
    if (value !== plan.lastString) {
      plan.lastString = value;
      plan.lastStringText = JSON.stringify(value);
    }
    return plan.lastStringText;
  }
  // true, false and null: their JSON text is what they parse back from, so the memo of raw texts answers.
  if (typeof value === 'boolean' || value === null) return fromRaw(plan, value === null ? 'null' : value ? 'true' : 'false');
  return plan.serialize(value);
}

/** One page's writing: the subscribers already written on it, and long document values met on it (readJsonFields). */
class PageWriter {
  private readonly subscribers = new Map<Subscriber, string>();
  private readonly fields: Array<string | undefined> = new Array(MESSAGE_PLAN.length);
  private readonly known: Array<string | undefined> = new Array(MESSAGE_PLAN.length);
  /** After a list text is written: whether it holds every field of the document, as stored (see messageListTextHoldingDocument). */
  holdsDocument = false;
  private otherKeys = 0;
  /** PLAN_SLOTS, counting the document's keys the schema does not declare (readJsonFields asks for every key). */
  private readonly countingSlots = {
    get: (key: string): number | undefined => {
      const slot = PLAN_SLOTS.get(key);
      if (slot === undefined) this.otherKeys++;
      return slot;
    },
  };

  /** The message's text; with `forText`, its list text (messageListText), or undefined when its document is unreadable. */
  message(stored: StoredMessage, subscriber: Subscriber | undefined, forText: true): string | undefined;
  message(stored: StoredMessage, subscriber: Subscriber | undefined, forText: false): string;
  message(stored: StoredMessage, subscriber: Subscriber | undefined, forText: boolean): string | undefined {
    const fields = this.fields;
    fields.fill(undefined);
    this.otherKeys = 0;
    let holds = true;
    if (stored.document && !readJsonFields(stored.document, forText ? this.countingSlots : PLAN_SLOTS, fields, this.known)) {
      return forText ? undefined : serializeWholeMessage(messageOf(subscriber === undefined ? stored : { ...stored, subscriber }));
    }
    const columns = stored.columns as unknown as Record<string, unknown>;
    let json = '';
    for (let slot = 0; slot < MESSAGE_PLAN.length; slot++) {
      const plan = MESSAGE_PLAN[slot]!;
      let text: string | undefined;
      if (plan.source === 'column' && columns[plan.name] !== undefined) {
        text = fromColumn(plan, columns[plan.name]);
        // A document value the column overrides is not in the text.
        if (fields[slot] !== undefined) holds = false;
      } else if (plan.source === 'subscriber' && forText) {
        // A document holding a copy of its subscriber (older rows) is written from it when the lookup finds none.
        if (fields[slot] !== undefined) return undefined;
        json += MESSAGE_TEXT_SUBSCRIBER;
        continue;
      } else if (plan.source === 'subscriber' && subscriber !== undefined) {
        text = this.subscriber(subscriber);
      } else {
        let raw = fields[slot];
        if (raw !== undefined && plan.name === 'template' && raw.startsWith(SNAPSHOT_REFERENCE)) {
          // A referenced workflow snapshot: the list text keeps the reference; a page puts the snapshot's text in.
          if (forText) {
            json += MESSAGE_TEXT_TEMPLATE + raw.slice(SNAPSHOT_REFERENCE.length, -1);
            continue;
          }
          if (stored.template === undefined) throw new Error('message serializer: a message without its workflow snapshot');
          raw = stored.template;
        }
        if (plan.defaultText !== undefined && (raw === undefined || raw === 'null')) text = plan.defaultText;
        else if (raw !== undefined) text = fromRaw(plan, raw);
        if (text !== raw) holds = false;
      }
      if (text !== undefined) json += (json === '' ? '{' : ',') + plan.key + text;
    }
    this.holdsDocument = holds && this.otherKeys === 0;
    return json + '}';
  }

  subscriber(subscriber: Subscriber): string {
    let text = this.subscribers.get(subscriber);
    if (text === undefined) {
      text = serializeSubscriber(subscriber);
      this.subscribers.set(subscriber, text);
    }
    return text;
  }
}

