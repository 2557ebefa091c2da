import type { Caller, Topic } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { requireTopic } from './topic-access.js';

export interface GetTopicInput {
  caller: Caller;
  topicKey: string;
}

export async function getTopic(deps: Deps, input: GetTopicInput): Promise<Topic> {
  return requireTopic(deps, input.caller, input.topicKey);
}
