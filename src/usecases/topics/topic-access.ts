import { NotFoundError } from '../../domain/errors.js';
import type { Caller, Topic } from '../../domain/types.js';
import type { Deps } from '../deps.js';

/** The caller environment's topic with this key; 404 otherwise. */
export async function requireTopic(deps: Deps, caller: Caller, topicKey: string): Promise<Topic> {
  const topic = await deps.store.topics.getByKey(caller.environmentId, topicKey);
  if (!topic) throw new NotFoundError(`Topic with key ${topicKey} not found`);
  return topic;
}
