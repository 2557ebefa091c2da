import { isLockedWorkflow } from '../../domain/preferences.js';
import type { Workflow } from '../../domain/workflow.js';
import type { Store } from '../../store/ports.js';
import type { Deps } from '../deps.js';
import { subscriberOf, type PreferenceSubject } from './preference-subject.js';
import { globalView, workflowView, type SubscriberPreferencesView } from './preference-view.js';

/** Novu's `criticality` filter: critical (or read-only) workflows, the others (the default), or all. */
export type Criticality = 'critical' | 'nonCritical' | 'all';

export type GetSubscriberPreferencesInput = PreferenceSubject & { criticality?: Criticality };

/**
 * The subscriber's global preference and one merged preference per active workflow of the environment, oldest
 * workflow first. Deleted workflows are not listed (their records stay stored but unseen).
 */
export async function getSubscriberPreferences(deps: Deps, input: GetSubscriberPreferencesInput): Promise<SubscriberPreferencesView> {
  return readPreferences(deps.store, input);
}

/** getSubscriberPreferences on a given store (a transaction's, to read back what it just wrote). */
export async function readPreferences(store: Store, input: GetSubscriberPreferencesInput): Promise<SubscriberPreferencesView> {
  const subscriber = await subscriberOf(store, input);
  const [records, workflows] = await Promise.all([
    store.preferences.listForSubscriber(input.environmentId, subscriber._id),
    activeWorkflows(store, input.environmentId),
  ]);
  const criticality = input.criticality ?? 'nonCritical';
  const listed = workflows.filter((workflow) => criticality === 'all' || isLockedWorkflow(workflow) === (criticality === 'critical'));
  return {
    subscriber,
    global: globalView(records.global),
    workflows: listed.map((workflow) => workflowView(workflow, records.global, records.workflows[workflow._id])),
  };
}

const WORKFLOW_PAGE = 200;

/** Every active, non-deleted workflow of the environment, oldest first. */
export async function activeWorkflows(store: Store, environmentId: string): Promise<Workflow[]> {
  const all: Workflow[] = [];
  for (let offset = 0; ; offset += WORKFLOW_PAGE) {
    const { workflows } = await store.workflows.list(environmentId, { offset, limit: WORKFLOW_PAGE });
    all.push(...workflows);
    if (workflows.length < WORKFLOW_PAGE) break;
  }
  return all.filter((workflow) => workflow.active).reverse();
}
