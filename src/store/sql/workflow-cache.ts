import { deepFreeze } from '../../domain/deep-freeze.js';
import type { Workflow } from '../../domain/workflow.js';

/**
 * Scale-out: the workflows a process read lately, so a trigger (API) and its processing (worker) do not read the same
 * workflow from PostgreSQL each time. A write drops the environment's entries in the writing process at once, and
 * every process's after the commit through the announcement of `usecases/workflows/announce-workflows-changed.ts`.
 *
 * A read that overlapped a drop is not kept (it may have read the row before the write committed): `forget` moves a
 * generation on, and an answer is kept only when the generation did not move while it was read. Not used while the
 * process may miss announcements (`trusted`), and entries lapse after `ttlMs` in any case. Only found workflows are
 * kept, so a create needs no drop to be seen.
 */
export class WorkflowCache {
  private readonly entries = new Map<string, { workflow: Workflow; until: number }>();
  private generation = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly trusted: () => boolean,
    private readonly maxEntries = 10_000,
  ) {}

  /**
   * A copy each time (callers may change what they get: a save builds on the workflow it read), unless `shared`: a
   * caller that only reads gets the kept object itself, frozen to the last nested value (a change throws), which
   * saves the copy on every trigger (`structuredClone`, 3 % of the API's CPU under a burst of triggers, issue 24).
   */
  async get(environmentId: string, key: string, load: () => Promise<Workflow | undefined>, options: { shared?: boolean } = {}): Promise<Workflow | undefined> {
    const cacheKey = `${environmentId}\u0000${key}`;
    const now = Date.now();
    const trusted = this.trusted();
    const cached = this.entries.get(cacheKey);
    if (cached && cached.until > now && trusted) return options.shared ? cached.workflow : structuredClone(cached.workflow);
    const generation = this.generation;
    const workflow = await load();
    if (workflow && trusted && this.trusted() && generation === this.generation) {
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(cacheKey, { workflow: deepFreeze(structuredClone(workflow)), until: now + this.ttlMs });
    }
    return workflow;
  }

  /** Drops one environment's entries, or all of them (an announcement may have been missed). */
  forget(environmentId?: string): void {
    this.generation += 1;
    if (environmentId === undefined) {
      this.entries.clear();
      return;
    }
    const prefix = `${environmentId}\u0000`;
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
  }
}
