import type { TemplateRenderer } from '../domain/templates.js';
import type { Deps } from '../usecases/deps.js';
import type { CustomStepRegistry } from '../usecases/engine/step-context.js';
import { recoverAcceptedTriggers } from '../usecases/events/recover-triggers.js';
import { createDispatcher } from './dispatch.js';
import { startWebhookRelay, type WebhookRelay } from './webhook-relay.js';
import { startRetentionSweeper } from './retention-sweeper.js';

export interface WorkerOptions {
  customSteps?: CustomStepRegistry;
  renderer?: TemplateRenderer;
  /** Jobs run at once; default config.worker.concurrency. */
  concurrency?: number;
}

export interface Worker {
  start(): Promise<void>;
  /** Stops taking jobs and waits for running ones (returned to the queue after `graceMs`). */
  stop(options?: { graceMs?: number }): Promise<void>;
}

/** The worker: a thin adapter from the queue to the engine's use-cases. */
export function createWorker(deps: Deps, options: WorkerOptions = {}): Worker {
  let started = false;
  let sweepTimer: NodeJS.Timeout | undefined;
  let relay: WebhookRelay | undefined;
  let retention: { stop(): Promise<void> } | undefined;
  const sweep = async (olderThanMs: number) => {
    const recovered = await recoverAcceptedTriggers(deps, olderThanMs);
    if (recovered > 0) deps.logger.info({ recovered }, 're-enqueued accepted triggers');
  };
  return {
    async start() {
      if (started) return;
      started = true;
      await sweep(0);
      const dispatch = createDispatcher(deps, options);
      // Jobs running now: the webhook relay gives way while there are any (in-app deliveries are the more urgent).
      let running = 0;
      const handler: typeof dispatch = async (job) => {
        running++;
        try {
          await dispatch(job);
        } finally {
          running--;
        }
      };
      await deps.queue.start(handler, { concurrency: options.concurrency ?? deps.config.worker.concurrency });
      const intervalMs = deps.config.worker.triggerSweepMs;
      sweepTimer = setInterval(() => {
        sweep(intervalMs).catch((error) => deps.logger.warn({ err: error }, 'accepted-trigger sweep failed'));
      }, intervalMs);
      sweepTimer.unref();
      relay = startWebhookRelay(deps, { busy: () => running > 0 });
      retention = startRetentionSweeper(deps);
    },
    async stop(stopOptions = {}) {
      clearInterval(sweepTimer);
      await relay?.stop();
      await retention?.stop();
      await deps.queue.close({ graceMs: stopOptions.graceMs });
    },
  };
}
