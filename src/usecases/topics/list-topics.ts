import type { Caller, Topic } from '../../domain/types.js';
import type { Deps } from '../deps.js';

export interface ListTopicsInput {
  caller: Caller;
  key?: string;
  name?: string;
  offset: number;
  limit: number;
}

/** Oldest first; `key` exact, `name` a case-insensitive substring. */
export async function listTopics(deps: Deps, input: ListTopicsInput): Promise<{ topics: Topic[]; totalCount: number }> {
  return deps.store.topics.list(input.caller.environmentId, {
    ...(input.key !== undefined ? { key: input.key } : {}),
    ...(input.name !== undefined ? { name: input.name } : {}),
    offset: input.offset,
    limit: input.limit,
  });
}
