import { NotFoundError } from '../../domain/errors.js';
import type { Caller, Message, Subscriber } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { withSubscribers } from '../messages/with-subscribers.js';

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
 * (`_jobId`, `_templateId` as strings, `archived`).
 */
export type FeedItem = Omit<Message, 'subscriber'> & { _jobId: string; _templateId: string; archived: boolean; subscriber?: FeedSubscriber };

/** Novu's feed-item subscriber: a few profile fields, absent rather than null (its clients reject nulls there). */
export interface FeedSubscriber {
  _id: string;
  subscriberId: string;
  firstName?: string;
  lastName?: string;
  avatar?: string;
}

export function feedSubscriberOf(subscriber: Subscriber): FeedSubscriber {
  const summary: FeedSubscriber = { _id: subscriber._id, subscriberId: subscriber.subscriberId };
  for (const field of ['firstName', 'lastName', 'avatar'] as const) {
    const value = subscriber[field];
    if (typeof value === 'string') summary[field] = value;
  }
  return summary;
}

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
  // Novu's feed items carry their subscriber (the legacy SDK's callers read it).
  await withSubscribers(deps.store, env, page.data);
  const data = page.data.map((message) => ({
    ...message,
    subscriber: message.subscriber ? feedSubscriberOf(message.subscriber) : undefined,
    _jobId: message._jobId ?? '',
    _templateId: message._templateId ?? '',
    archived: message.archived ?? false,
  }));
  return { data, totalCount, hasMore: page.hasMore, pageSize: input.limit, page: input.page };
}

/**
 * GET /v1/subscribers/{subscriberId}/notifications/unseen: how many in-app messages are not seen yet, or with
 * `seen: true` how many are seen (Novu's `?seen=` parameter of the same route).
 */
export async function countUnseen(deps: Deps, input: { caller: Caller; subscriberId: string; seen?: boolean }): Promise<{ count: number }> {
  const env = input.caller.environmentId;
  const subscriber = await deps.store.subscribers.findBySubscriberId(env, input.subscriberId);
  if (!subscriber) throw NotFoundError.subscriber(input.subscriberId);
  const page = await deps.store.messages.list(env, { channel: 'in_app', subscriberId: input.subscriberId, seen: input.seen ?? false, page: 0, limit: 1 });
  return { count: page.totalCount ?? page.data.length };
}
