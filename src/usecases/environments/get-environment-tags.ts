import { NotFoundError } from '../../domain/errors.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';

const PAGE = 200;

/**
 * GET /v2/environments/{environmentId}/tags: every tag the environment's workflows carry, once each, sorted. The id is
 * the caller's own environment (`_id` or application identifier); any other environment is a 404, as other records are.
 */
export async function getEnvironmentTags(deps: Pick<Deps, 'store'>, input: { caller: Caller; environmentId: string }): Promise<string[]> {
  const environment = await deps.store.tenancy.getEnvironment(input.caller.environmentId);
  if (!environment || (input.environmentId !== environment._id && input.environmentId !== environment.identifier)) {
    throw NotFoundError.entity('Environment', input.environmentId);
  }
  const tags = new Set<string>();
  for (let offset = 0; ; offset += PAGE) {
    const { workflows } = await deps.store.workflows.list(environment._id, { offset, limit: PAGE });
    for (const workflow of workflows) for (const tag of workflow.tags) tags.add(tag);
    if (workflows.length < PAGE) break;
  }
  return [...tags].sort();
}
