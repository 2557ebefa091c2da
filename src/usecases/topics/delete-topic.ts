import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { requireTopic } from './topic-access.js';

export interface DeleteTopicInput {
  caller: Caller;
  topicKey: string;
}

/** Deletes the topic and its subscriptions; past notification events keep their topic references. */
export async function deleteTopic(deps: Deps, input: DeleteTopicInput): Promise<void> {
  const topic = await requireTopic(deps, input.caller, input.topicKey);
  await deps.store.transaction((store) => store.topics.delete(input.caller.environmentId, topic._id));
}
