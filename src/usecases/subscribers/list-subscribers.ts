import { ValidationError } from '../../domain/errors.js';
import { isRecordId } from '../../domain/ids.js';
import type { Caller, Page, Subscriber } from '../../domain/types.js';
import type { Deps } from '../deps.js';

export interface ListSubscribersInput {
  caller: Caller;
  /** Case-insensitive exact email. */
  email?: string;
  /** Case-insensitive substring of the first, last or full name. */
  name?: string;
  subscriberId?: string;
  phone?: string;
  orderDirection?: 'ASC' | 'DESC';
  /** Novu v2 cursors: the `_id` of a subscriber (a previous answer's `next` / `previous`). They replace `page`. */
  after?: string;
  before?: string;
  page: number;
  limit: number;
}

/** Herald's page fields plus Novu v2's cursor fields, so both kinds of client can walk the list. */
export interface SubscriberListPage extends Page<Subscriber> {
  totalCount: number;
  next: string | null;
  previous: string | null;
  totalCountCapped: boolean;
}

/** Newest first by default, with totalCount, hasMore and the cursors of the neighbouring pages. */
export async function listSubscribers(deps: Deps, input: ListSubscribersInput): Promise<SubscriberListPage> {
  const { caller, after, before, ...filter } = input;
  if (after !== undefined && before !== undefined) throw new ValidationError(['after and before cannot be combined']);
  const afterCursor = after === undefined ? undefined : await cursorOf(deps, caller.environmentId, after, 'after');
  const beforeCursor = before === undefined ? undefined : await cursorOf(deps, caller.environmentId, before, 'before');
  const page = await deps.store.subscribers.list(caller.environmentId, { ...filter, after: afterCursor, before: beforeCursor });
  const first = page.data[0]?._id ?? null;
  const last = page.data[page.data.length - 1]?._id ?? null;
  if (beforeCursor) {
    // Read backwards: `hasMore` from the store means more records precede this page.
    return { ...page, totalCount: page.totalCount ?? 0, hasMore: last !== null, next: last, previous: page.hasMore ? first : null, totalCountCapped: false };
  }
  const walkedIn = afterCursor !== undefined || input.page > 0;
  return { ...page, totalCount: page.totalCount ?? 0, next: page.hasMore ? last : null, previous: walkedIn ? first : null, totalCountCapped: false };
}

async function cursorOf(deps: Deps, environmentId: string, id: string, name: string): Promise<{ createdAt: string; id: string }> {
  const [subscriber] = isRecordId(id) ? await deps.store.subscribers.getMany(environmentId, [id]) : [];
  if (!subscriber) throw new ValidationError([`${name} must be the _id of a subscriber (a previous page's next or previous)`]);
  return { createdAt: subscriber.createdAt, id: subscriber._id };
}
