import { isoNow } from '../../domain/clock.js';
import { newId } from '../../domain/ids.js';
import type { Subscriber } from '../../domain/types.js';
import type { TriggerRecord } from '../../store/ports.js';
import type { Deps } from '../deps.js';
import type { TriggerRecipient, TriggerRequest } from '../events/accept-trigger.js';

/** One subscriber a trigger reaches, with how it was addressed (the event's `to` and `topics`). */
export interface Recipient {
  subscriber: Subscriber;
  /**
   * `subscriber` is the record exactly as the store returned it (neither built nor changed here), so the event's
   * first step may use it instead of reading it again.
   */
  asStored: boolean;
  /** When `subscriber` is not as stored: the record as the store now returns it, if known without reading it. */
  stored?: Subscriber;
  to: Record<string, unknown>;
  topics: Array<{ _topicId: string; topicKey: string }>;
}

/** Subscriber-object fields a trigger may set (created or updated with them). */
const PROFILE_FIELDS = ['firstName', 'lastName', 'email', 'phone', 'avatar', 'locale', 'timezone', 'data'] as const;

const PAGE = 500;

/**
 * Expands `to` (subscriberIds, subscriber objects, topics, or a broadcast) into distinct subscribers, in the
 * order they were named. Unknown subscriberIds and subscriber objects are created; objects update the profile
 * fields they carry. A topic that does not exist reaches nobody.
 */
export async function resolveRecipients(deps: Deps, trigger: TriggerRecord): Promise<Recipient[]> {
  const request = trigger.request as TriggerRequest;
  const env = trigger.environmentId;
  const byId = new Map<string, Recipient>();
  const add = (subscriber: Subscriber, to: Record<string, unknown>, topic?: { _topicId: string; topicKey: string }, asStored = true, stored?: Subscriber) => {
    const existing = byId.get(subscriber.subscriberId);
    if (existing) {
      if (topic && !existing.topics.some((t) => t._topicId === topic._topicId)) existing.topics.push(topic);
      return;
    }
    byId.set(subscriber.subscriberId, { subscriber, asStored, ...(stored ? { stored } : {}), to, topics: topic ? [topic] : [] });
  };

  if (request.broadcast) {
    let afterId: string | undefined;
    for (;;) {
      const ids = await deps.store.subscribers.listIds(env, afterId, PAGE);
      if (ids.length === 0) break;
      const subscribers = await deps.store.subscribers.getMany(env, ids.map((entry) => entry._id));
      for (const subscriber of subscribers) if (!subscriber.deleted) add(subscriber, { subscriberId: subscriber.subscriberId });
      afterId = ids[ids.length - 1]._id;
      if (ids.length < PAGE) break;
    }
    return [...byId.values()];
  }

  const entries: TriggerRecipient[] = Array.isArray(request.to) ? request.to : request.to === undefined ? [] : [request.to];
  for (const entry of entries) {
    if (typeof entry === 'string') {
      const { subscriber, asStored, stored } = await upsertSubscriber(deps, trigger, { subscriberId: entry });
      add(subscriber, { subscriberId: entry }, undefined, asStored, stored);
    } else if ('type' in entry && entry.type === 'Topic') {
      await addTopicSubscribers(deps, env, entry as { topicKey: string; exclude?: string[] }, add);
    } else {
      const definition = entry as { subscriberId: string } & Record<string, unknown>;
      const { subscriber, asStored, stored } = await upsertSubscriber(deps, trigger, definition);
      add(subscriber, { ...definition }, undefined, asStored, stored);
    }
  }
  return [...byId.values()];
}

async function addTopicSubscribers(
  deps: Deps,
  env: string,
  entry: { topicKey: string; exclude?: string[] },
  add: (subscriber: Subscriber, to: Record<string, unknown>, topic: { _topicId: string; topicKey: string }) => void,
): Promise<void> {
  const topic = await deps.store.topics.getByKey(env, entry.topicKey);
  if (!topic) return;
  const excluded = new Set(entry.exclude ?? []);
  let afterId: string | undefined;
  for (;;) {
    const subscriptions = await deps.store.topics.listSubscriptions(env, topic._id, { afterId, limit: PAGE });
    if (subscriptions.length === 0) break;
    const wanted = subscriptions.filter((subscription) => !excluded.has(subscription.subscriberId));
    const subscribers = await deps.store.subscribers.getMany(env, wanted.map((subscription) => subscription._subscriberId));
    for (const subscriber of subscribers) {
      if (!subscriber.deleted) add(subscriber, { subscriberId: subscriber.subscriberId }, { _topicId: topic._id, topicKey: topic.key });
    }
    afterId = subscriptions[subscriptions.length - 1]._id;
    if (subscriptions.length < PAGE) break;
  }
}

/**
 * Finds the subscriber, creating it when unknown and updating the profile fields the definition carries. `asStored`
 * is false for a record built here (created or updated), which may differ from what the store returns (nulls);
 * `stored` is then what the store returns for a created one, when it can tell without a read.
 */
async function upsertSubscriber(
  deps: Deps,
  trigger: TriggerRecord,
  definition: { subscriberId: string } & Record<string, unknown>,
): Promise<{ subscriber: Subscriber; asStored: boolean; stored?: Subscriber }> {
  const env = trigger.environmentId;
  const existing = await deps.store.subscribers.findBySubscriberId(env, definition.subscriberId);
  const changes = profileChanges(definition);
  if (existing) {
    const changed = Object.entries(changes).some(([key, value]) => JSON.stringify(existing[key as keyof Subscriber]) !== JSON.stringify(value));
    if (!changed) return { subscriber: existing, asStored: true };
    const updated: Subscriber = { ...existing, ...changes, __v: existing.__v + 1, updatedAt: isoNow(deps.clock) };
    await deps.store.subscribers.save(updated);
    deps.realtime.subscriberChanged({ environmentId: env, subscriberRecordId: updated._id });
    return { subscriber: updated, asStored: false };
  }
  const now = isoNow(deps.clock);
  const created: Subscriber = {
    _id: newId(deps.clock.now()),
    _organizationId: trigger.organizationId,
    _environmentId: env,
    subscriberId: definition.subscriberId,
    channels: [],
    topics: [],
    __v: 0,
    deleted: false,
    createdAt: now,
    updatedAt: now,
    ...changes,
  };
  try {
    const stored = await deps.store.subscribers.create(created);
    return { subscriber: created, asStored: false, stored };
  } catch (error) {
    // Another trigger created the same subscriberId a moment ago: use that one.
    const raced = await deps.store.subscribers.findBySubscriberId(env, definition.subscriberId);
    if (raced) return { subscriber: raced, asStored: true };
    throw error;
  }
}

function profileChanges(definition: Record<string, unknown>): Partial<Subscriber> {
  const changes: Record<string, unknown> = {};
  for (const field of PROFILE_FIELDS) {
    if (definition[field] !== undefined) changes[field] = definition[field];
  }
  return changes as Partial<Subscriber>;
}

