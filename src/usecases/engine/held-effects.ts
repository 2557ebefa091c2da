import type { Metrics } from '../../observability/ports.js';
import type { JobQueue } from '../../queue/ports.js';
import type { RealtimeNotifier } from '../../realtime/ports.js';
import type { Store } from '../../store/ports.js';
import type { Deps } from '../deps.js';

export interface HeldEffects {
  /** The deps to run with on `store` (the one Store.batch gave): queue adds, realtime announcements and the counts of writes are held. */
  depsFor(store: Store): Deps;
  /** Whether a queue add is held (work the write leaves to do). */
  queueAddsHeld(): boolean;
  /** Sends what is held, in the order it was asked for; call once the writes it announces are durable. */
  release(): Promise<void>;
}

/**
 * For work whose writes are held (Store.batch): what announces those writes, a queue job that reads them or a
 * realtime event about them, must not leave the process before they are written, and what counts them (deliveries,
 * finished step runs) must not count a write that then fails: its job runs again and counts it then. These deps keep
 * such calls and `release` makes them afterwards. Counts are held only where the store holds the writes: where they
 * run at once (inside a transaction), a count dropped with a later failure would never be made, the rerun finding
 * the write done.
 */
export function holdEffects(deps: Deps): HeldEffects {
  const held: Array<() => Promise<void> | void> = [];
  let adds = 0;
  const queue: JobQueue = Object.create(deps.queue, {
    enqueue: { value: async (...args: Parameters<JobQueue['enqueue']>) => void (adds++, held.push(() => deps.queue.enqueue(...args))) },
    enqueueMany: { value: async (...args: Parameters<JobQueue['enqueueMany']>) => void (adds++, held.push(() => deps.queue.enqueueMany(...args))) },
    // Not inherited: an add alongside a write is an add like the others (held, through enqueue).
    enqueueAlongside: { value: undefined },
  });
  const realtime: RealtimeNotifier = {
    messageDelivered: (...args) => void held.push(() => deps.realtime.messageDelivered(...args)),
    messagesChanged: (...args) => void held.push(() => deps.realtime.messagesChanged(...args)),
    subscriberChanged: (...args) => void held.push(() => deps.realtime.subscriberChanged(...args)),
  };
  // A provider request or a webhook attempt happened whatever is written after it: those pass through.
  const metrics: Metrics = Object.create(deps.metrics, {
    delivery: { value: (...args: Parameters<Metrics['delivery']>) => void held.push(() => deps.metrics.delivery(...args)) },
    jobFinished: { value: (...args: Parameters<Metrics['jobFinished']>) => void held.push(() => deps.metrics.jobFinished(...args)) },
  });
  return {
    depsFor: (store) => ({
      ...deps,
      store,
      queue,
      realtime,
      metrics: store.holdsWrites ? metrics : deps.metrics,
      afterHeldWrites: store.holdsWrites ? (effect) => void held.push(() => effect(deps)) : undefined,
    }),
    queueAddsHeld: () => adds > 0,
    async release() {
      for (const effect of held.splice(0)) await effect();
    },
  };
}
