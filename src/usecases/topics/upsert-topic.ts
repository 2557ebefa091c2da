import { isoNow } from '../../domain/clock.js';
import { ConflictError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import type { Caller, Topic } from '../../domain/types.js';
import type { Deps } from '../deps.js';

export interface UpsertTopicInput {
  caller: Caller;
  key: string;
  name?: string;
  /** `true`: an existing key is a 409 instead of an update. */
  failIfExists?: boolean;
}

/** Creates the topic, or updates the name of the existing one with this key (Novu's upsert). */
export async function upsertTopic(deps: Deps, input: UpsertTopicInput): Promise<{ topic: Topic; created: boolean }> {
  const { caller } = input;
  const existing = await deps.store.topics.getByKey(caller.environmentId, input.key);
  const now = isoNow(deps.clock);
  if (existing) {
    if (input.failIfExists) throw new ConflictError(`Topic with key ${input.key} already exists`);
    if (input.name === undefined || input.name === existing.name) return { topic: existing, created: false };
    const topic = { ...existing, name: input.name, updatedAt: now };
    await deps.store.topics.save(topic);
    return { topic, created: false };
  }
  const topic: Topic = {
    _id: newId(deps.clock.now()),
    _environmentId: caller.environmentId,
    _organizationId: caller.organizationId,
    key: input.key,
    ...(input.name !== undefined ? { name: input.name } : {}),
    createdAt: now,
    updatedAt: now,
  };
  await deps.store.topics.create(topic);
  return { topic, created: true };
}
