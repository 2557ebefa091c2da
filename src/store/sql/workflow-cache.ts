/**
 * Stored workflow documents by (environment, id or workflowId), kept by the process that reads them: every trigger
 * reads its workflow twice (the API to validate it, the worker to run it), one statement each (issue 24, the embedded
 * trigger path). Only the JSON text is kept, so each reader still gets an object of its own to change.
 *
 * Correct only while every write to `workflows` that could change an answer passes through `forget` in this process
 * first. `SqlWorkflowRepository` forgets on each of its writes, which are the only writes to the table; so the cache is
 * used only where one process writes the data (embedded SQLite: container.ts). A scale-out process would also need the
 * other processes' writes announced (as webhook endpoint changes are, over KeyRevocations): call `forget` from such an
 * announcement, and make `trusted` false while announcements could be missed.
 */
export class WorkflowCache {
  private readonly documents = new Map<string, string | null>();
  /** Per environment, bumped by every forget: a read that began before a write must not store its older answer. */
  private readonly generations = new Map<string, number>();
  private allGeneration = 0;

  constructor(
    private readonly maxEntries = 10_000,
    readonly trusted: () => boolean = () => true,
  ) {}

  /** The kept document (null: known not to exist), or undefined when unknown. */
  get(environmentId: string, key: string): string | null | undefined {
    return this.trusted() ? this.documents.get(`${environmentId} ${key}`) : undefined;
  }

  /** What `remember` needs to tell whether a write happened since the read began. */
  generation(environmentId: string): number {
    return this.allGeneration * 1_000_003 + (this.generations.get(environmentId) ?? 0);
  }

  remember(environmentId: string, key: string, document: string | null, generationAtRead: number): void {
    if (generationAtRead !== this.generation(environmentId) || !this.trusted()) return;
    if (this.documents.size >= this.maxEntries) this.documents.clear();
    this.documents.set(`${environmentId} ${key}`, document);
  }

  /** Drops one environment's documents (any workflow of it was written), or every one when `environmentId` is undefined. */
  forget(environmentId?: string): void {
    if (environmentId === undefined) {
      this.allGeneration++;
      this.documents.clear();
      return;
    }
    this.generations.set(environmentId, (this.generations.get(environmentId) ?? 0) + 1);
    const prefix = `${environmentId} `;
    for (const key of this.documents.keys()) if (key.startsWith(prefix)) this.documents.delete(key);
  }
}
