import type { Caller, Page, Subscriber } from '../../domain/types.js';
import type { Deps } from '../deps.js';

export interface ListSubscribersInput {
  caller: Caller;
  /** Case-insensitive exact email. */
  email?: string;
  /** Case-insensitive substring of the first, last or full name. */
  name?: string;
  subscriberId?: string;
  page: number;
  limit: number;
}

/** Newest first, with totalCount. */
export async function listSubscribers(deps: Deps, input: ListSubscribersInput): Promise<Page<Subscriber>> {
  const { caller, ...filter } = input;
  return deps.store.subscribers.list(caller.environmentId, filter);
}
