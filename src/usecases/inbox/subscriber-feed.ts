import { NotFoundError } from '../../domain/errors.js';
import type { Caller, Message } from '../../domain/types.js';
import type { Deps } from '../deps.js';

export interface SubscriberFeedInput {
  caller: Caller;
  subscriberId: string;
  page: number;
  limit: number;
  read?: boolean;
  seen?: boolean;
}

/**
 * A feed entry: the message plus the fields Novu's feed item carries and its clients require
 * (`_jobId`, `_templateId` as strings, `archived`; Herald has no archive, so it is always false).
 */
export type FeedItem = Message & { _jobId: string; _templateId: string; archived: boolean };

/** Novu's feed response: the page of in-app messages with its counters at the top level. */
export interface SubscriberFeed {
  data: FeedItem[];
  totalCount: number;
  hasMore: boolean;
  pageSize: number;
  page: number;
}

/** GET /v1/subscribers/{subscriberId}/notifications/feed: the subscriber's in-app messages, newest first. */
export async function getSubscriberFeed(deps: Deps, input: SubscriberFeedInput): Promise<SubscriberFeed> {
  const env = input.caller.environmentId;
  const subscriber = await deps.store.subscribers.findBySubscriberId(env, input.subscriberId);
  if (!subscriber) throw NotFoundError.subscriber(input.subscriberId);
  const page = await deps.store.messages.list(env, {
    channel: 'in_app',
    subscriberId: input.subscriberId,
    read: input.read,
    seen: input.seen,
    page: input.page,
    limit: input.limit,
  });
  const totalCount = page.totalCount ?? page.data.length;
  const data = page.data.map((message) => ({
    ...message,
    _jobId: message._jobId ?? '',
    _templateId: message._templateId ?? '',
    archived: false,
  }));
  return { data, totalCount, hasMore: page.hasMore, pageSize: input.limit, page: input.page };
}

/** GET /v1/subscribers/{subscriberId}/notifications/unseen: how many in-app messages are not seen yet. */
export async function countUnseen(deps: Deps, input: { caller: Caller; subscriberId: string }): Promise<{ count: number }> {
  const env = input.caller.environmentId;
  const subscriber = await deps.store.subscribers.findBySubscriberId(env, input.subscriberId);
  if (!subscriber) throw NotFoundError.subscriber(input.subscriberId);
  const page = await deps.store.messages.list(env, { channel: 'in_app', subscriberId: input.subscriberId, seen: false, page: 0, limit: 1 });
  return { count: page.totalCount ?? page.data.length };
}
