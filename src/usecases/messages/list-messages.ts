import type { Caller, DeliveryChannel, Message, Page } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { validateContextKeyFilter } from './context-key-filter.js';
import { withSubscribers } from './with-subscribers.js';

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

/** The environment's non-deleted messages, newest first, with totalCount and hasMore. */
export async function listMessages(deps: Deps, input: ListMessagesInput): Promise<Page<Message>> {
  const page = await deps.store.messages.list(input.caller.environmentId, {
    channel: input.channel,
    subscriberId: input.subscriberId,
    transactionIds: input.transactionId,
    contextKeys: validateContextKeyFilter(input.contextKeys),
    page: input.page,
    limit: input.limit,
  });
  return { ...page, data: await withSubscribers(deps.store, input.caller.environmentId, page.data) };
}
