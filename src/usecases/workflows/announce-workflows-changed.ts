import type { Deps } from '../deps.js';

/**
 * After a workflow write commits: every process drops its cached workflows of the environment (store/sql/
 * workflow-cache.ts), over the channel that already carries revoked API keys (KeyRevocations: in-process embedded,
 * Redis pub/sub scaled out), under a prefix no key hash has. It returns once Redis handed the announcement to every
 * subscribed process, so a trigger after the write's answer, through any API process, sees the new workflow.
 */
const PREFIX = 'workflows:';

export async function announceWorkflowsChanged(deps: Pick<Deps, 'keyRevocations'>, environmentId: string): Promise<void> {
  await deps.keyRevocations.publish(PREFIX + environmentId);
}

/** The KeyRevocations listener that drops cached workflows: one environment's, or all after missed announcements. */
export function workflowCacheListener(cache: { forget(environmentId?: string): void }): (announced: string | undefined) => void {
  return (announced) => {
    if (announced === undefined) cache.forget();
    else if (announced.startsWith(PREFIX)) cache.forget(announced.slice(PREFIX.length));
  };
}
