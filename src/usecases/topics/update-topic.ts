import { isoNow } from '../../domain/clock.js';
import type { Caller, Topic } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { requireTopic } from './topic-access.js';

export interface UpdateTopicInput {
  caller: Caller;
  topicKey: string;
  name?: string;
}

export async function updateTopic(deps: Deps, input: UpdateTopicInput): Promise<Topic> {
  const current = await requireTopic(deps, input.caller, input.topicKey);
  if (input.name === undefined) return current;
  const topic = { ...current, name: input.name, updatedAt: isoNow(deps.clock) };
  await deps.store.topics.save(topic);
  return topic;
}
