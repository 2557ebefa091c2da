import type { Message } from '../../domain/types.js';
import type { Store } from '../../store/ports.js';

/**
 * Sets each message's `subscriber` record, with one query for the whole set. The messages are the ones the store
 * just returned (fresh objects, nobody else holds them), so they are completed in place rather than copied.
 */
export async function withSubscribers(store: Store, environmentId: string, messages: Message[]): Promise<Message[]> {
  if (messages.length === 0) return messages;
  const subscribers = await store.subscribers.getMany(environmentId, messages.map((message) => message._subscriberId));
  const byId = new Map(subscribers.map((subscriber) => [subscriber._id, subscriber]));
  for (const message of messages) {
    const subscriber = byId.get(message._subscriberId);
    if (subscriber) message.subscriber = subscriber;
  }
  return messages;
}
