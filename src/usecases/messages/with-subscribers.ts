import type { Message } from '../../domain/types.js';
import type { Store } from '../../store/ports.js';

/** Attaches each message's `subscriber` record, with one query for the whole set. */
export async function withSubscribers(store: Store, environmentId: string, messages: Message[]): Promise<Message[]> {
  if (messages.length === 0) return messages;
  const subscribers = await store.subscribers.getMany(environmentId, messages.map((message) => message._subscriberId));
  const byId = new Map(subscribers.map((subscriber) => [subscriber._id, subscriber]));
  return messages.map((message) => {
    const subscriber = byId.get(message._subscriberId);
    return subscriber ? { ...message, subscriber } : message;
  });
}
