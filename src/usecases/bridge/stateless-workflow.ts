import { isoNow } from '../../domain/clock.js';
import { workflowFromDiscovered } from '../../domain/bridge-workflow.js';
import { ConflictError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import type { Caller } from '../../domain/types.js';
import type { Workflow } from '../../domain/workflow.js';
import type { Deps } from '../deps.js';
import { workflowNotFound } from '../events/accept-trigger.js';
import { notificationGroupIdFor } from '../workflows/notification-group.js';
import { discoverBridge } from './sync-bridge.js';
import { announceWorkflowsChanged } from '../workflows/announce-workflows-changed.js';

/**
 * A trigger carrying `bridgeUrl` (framework apps in development, `workflow.trigger()` with a tunnel): the workflow is
 * discovered from that bridge now, and runs there. Herald keeps a copy (origin external, with its own bridge URL) so
 * the worker, the activity feed and the Inbox see an ordinary workflow; a later sync of the environment's bridge
 * replaces or deletes it. Unknown on that bridge: the usual 422.
 */
export async function workflowFromBridgeUrl(deps: Deps, caller: Caller, bridgeUrl: unknown, name: string): Promise<Workflow> {
  const { url, workflows } = await discoverBridge(deps, caller, bridgeUrl);
  const discovered = workflows.find((workflow) => workflow.workflowId === name);
  if (!discovered) throw workflowNotFound(name);
  const existing = await deps.store.workflows.get(caller.environmentId, name);
  if (existing && existing.origin !== 'external') {
    throw new ConflictError(`Workflow ${name} exists in this environment with origin ${existing.origin}; a trigger's bridgeUrl cannot replace it`);
  }
  const workflow: Workflow = {
    ...workflowFromDiscovered(discovered, existing, {
      newId: () => newId(deps.clock.now()),
      environmentId: caller.environmentId,
      organizationId: caller.organizationId,
      notificationGroupId: notificationGroupIdFor(caller.environmentId),
      now: isoNow(deps.clock),
    }),
    bridgeUrl: url,
  };
  if (existing) await deps.store.workflows.save(workflow);
  else await deps.store.workflows.create(workflow);
  await announceWorkflowsChanged(deps, caller.environmentId);
  return workflow;
}
