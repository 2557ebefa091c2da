import type { JobQueue } from '../../queue/ports.js';
import type { RealtimeNotifier } from '../../realtime/ports.js';
import type { Deps } from '../deps.js';

export interface HeldEffects {
  /** The deps to run with: queue adds and realtime announcements are held. */
  deps: Deps;
  /** Whether a queue add is held (work the write leaves to do). */
  queueAddsHeld(): boolean;
  /** Sends what is held, in the order it was asked for; call once the writes it announces are durable. */
  release(): Promise<void>;
}

/**
 * For work whose writes are held (Store.batch): what announces those writes, a queue job that reads them or a
 * realtime event about them, must not leave the process before they are written. These deps keep such calls and
 * `release` makes them afterwards.
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
  return {
    deps: { ...deps, queue, realtime },
    queueAddsHeld: () => adds > 0,
    async release() {
      for (const effect of held.splice(0)) await effect();
    },
  };
}
