import type { ListedMessage } from '../../domain/stored-message.js';
import type { Caller, DeliveryChannel, Page } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { validateContextKeyFilter } from './context-key-filter.js';

export interface ListMessagesInput {
  caller: Caller;
  channel?: DeliveryChannel;
  /** External subscriberId. */
  subscriberId?: string;
  transactionId?: string[];
  contextKeys?: string[];
  page: number;
  limit: number;
}

/**
 * The environment's non-deleted messages, newest first, with totalCount and hasMore, each with its subscriber record.
 * The messages stay in their stored form (ListedMessage: the stored list text, or the columns and the document): the
 * list is written out from the stored text without parsing it (issue 24).
 */
export async function listMessages(deps: Pick<Deps, 'store'>, input: ListMessagesInput): Promise<Page<ListedMessage>> {
  const environmentId = input.caller.environmentId;
  const page = await deps.store.messages.listStored(environmentId, {
    channel: input.channel,
    subscriberId: input.subscriberId,
    transactionIds: input.transactionId,
    contextKeys: validateContextKeyFilter(input.contextKeys),
    page: input.page,
    limit: input.limit,
  });
  // The store may read the subscribers' records with the page (SQLite: listStored's synchronous block; PostgreSQL:
  // one statement for one subscriber's page); the others in one query.
  const without = page.data.filter((message) => message.subscriber === undefined);
  if (without.length === 0) return page;
  // A page of one subscriber's messages shares one record object.
  const subscribers = await deps.store.subscribers.getMany(environmentId, without.map((message) => message.subscriberRecordId));
  const byId = new Map(subscribers.map((subscriber) => [subscriber._id, subscriber]));
  for (const message of without) {
    const subscriber = byId.get(message.subscriberRecordId);
    if (subscriber) message.subscriber = subscriber;
  }
  return page;
}
