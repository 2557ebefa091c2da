import type { DiscoveredWorkflow } from '../../bridge/ports.js';
import { isoNow } from '../../domain/clock.js';
import { diffDiscovered, workflowFromDiscovered, type BridgeDiff, type WorkflowIds } from '../../domain/bridge-workflow.js';
import { ConflictError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import type { Caller } from '../../domain/types.js';
import type { Workflow } from '../../domain/workflow.js';
import type { Deps } from '../deps.js';
import { notificationGroupIdFor } from '../workflows/notification-group.js';
import { bridgeRefusal, callerApiKeyId, checkBridgeUrl, signingKeyFor } from './bridge-target.js';
import { announceWorkflowsChanged } from '../workflows/announce-workflows-changed.js';

export interface SyncBridgeInput {
  caller: Caller;
  bridgeUrl: unknown;
}

/** The bridge's workflows, discovered with a signed call; a failure is a 400 saying why. */
export async function discoverBridge(deps: Deps, caller: Caller, bridgeUrl: unknown): Promise<{ url: string; workflows: DiscoveredWorkflow[] }> {
  const url = checkBridgeUrl(bridgeUrl);
  const secretKey = await signingKeyFor(deps, caller.environmentId, callerApiKeyId(caller));
  try {
    const { result } = await deps.bridge.discover({ url, secretKey });
    return { url, workflows: result.workflows };
  } catch (error) {
    bridgeRefusal(error, url);
  }
}

function idsFor(deps: Deps, caller: Caller): WorkflowIds {
  return {
    newId: () => newId(deps.clock.now()),
    environmentId: caller.environmentId,
    organizationId: caller.organizationId,
    notificationGroupId: notificationGroupIdFor(caller.environmentId),
    now: isoNow(deps.clock),
  };
}

/**
 * POST /v1/bridge/sync (`npx novu sync`): discovers the bridge (signed), then in one transaction creates or updates
 * each discovered workflow as origin `external`, deletes the environment's external workflows no longer discovered,
 * and records the bridge URL with the API key that signs calls to it. Nothing is written when discovery fails or a
 * discovered workflowId belongs to a workflow made in the dashboard or API (409).
 */
export async function syncBridge(deps: Deps, input: SyncBridgeInput): Promise<Workflow[]> {
  const { caller } = input;
  const { url, workflows: discovered } = await discoverBridge(deps, caller, input.bridgeUrl);
  const ids = idsFor(deps, caller);
  const seen = new Set<string>();
  for (const workflow of discovered) {
    if (seen.has(workflow.workflowId)) throw new ConflictError(`The bridge defines workflow ${workflow.workflowId} twice`);
    seen.add(workflow.workflowId);
  }
  const synced = await deps.store.transaction(async (store) => {
    const written: Workflow[] = [];
    for (const candidate of discovered) {
      const existing = await store.workflows.get(caller.environmentId, candidate.workflowId);
      if (existing && existing.origin !== 'external') {
        throw new ConflictError(
          `Workflow ${candidate.workflowId} already exists in this environment with origin ${existing.origin}: delete or rename it before syncing the code workflow of that id`,
        );
      }
      const { bridgeUrl: _ownBridge, ...base } = existing ?? ({} as Partial<Workflow>);
      const workflow = workflowFromDiscovered(candidate, existing ? (base as Workflow) : undefined, ids);
      if (existing) await store.workflows.save(workflow);
      else await store.workflows.create(workflow);
      written.push(workflow);
    }
    for (const stale of await store.bridge.listExternalWorkflows(caller.environmentId)) {
      if (seen.has(stale.workflowId)) continue;
      await store.workflows.save({ ...stale, deleted: true, deletedAt: ids.now, deletedBy: caller.actorId, updatedAt: ids.now });
      await store.bridge.deleteControls(caller.environmentId, stale.workflowId);
    }
    await store.bridge.saveEndpoint({ environmentId: caller.environmentId, url, apiKeyId: callerApiKeyId(caller), syncedAt: ids.now });
    return written;
  });
  await announceWorkflowsChanged(deps, caller.environmentId);
  return synced;
}

/** POST /v1/bridge/diff: what a sync of this bridge would create, update and delete; nothing is written. */
export async function diffBridge(deps: Deps, input: SyncBridgeInput): Promise<BridgeDiff> {
  const { caller } = input;
  const { workflows } = await discoverBridge(deps, caller, input.bridgeUrl);
  const stored = await deps.store.bridge.listExternalWorkflows(caller.environmentId);
  return diffDiscovered(workflows, stored, idsFor(deps, caller));
}
