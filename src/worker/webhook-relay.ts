import type { Deps } from '../usecases/deps.js';
import { fanOutEvents } from '../usecases/webhooks/fan-out-events.js';
import { pruneWebhookHistory, sweepWebhookAttempts } from '../usecases/webhooks/sweep-webhook-attempts.js';

export interface WebhookRelay {
  stop(): Promise<void>;
}

const BATCH = 500;

/**
 * The worker's outbox relay: fans recorded events out to endpoints every `relayIntervalMs`, at once again while
 * batches come back full, and sends their first attempts itself, with fewer requests in flight while the worker runs
 * jobs so that webhooks take the slack rather than the in-app deliveries' share; and sweeps overdue attempts (lost
 * jobs, a relay killed mid-batch) every `sweepIntervalMs`. With no endpoints there are no events, and a relay turn is one indexed read of an empty partial index. The sweep also deletes history older
 * than config.webhooks.retentionDays.
 */
export interface RelayOptions {
  /** Whether this worker is running jobs (a probe run at every send): the relay then sends with BUSY_LANES in flight. */
  busy?: () => boolean;
}

/** Sends in flight while the worker has no job running, and while it has (in-app deliveries first). */
const IDLE_LANES = 16;
const BUSY_LANES = 2;

export function startWebhookRelay(deps: Deps, options: RelayOptions = {}): WebhookRelay {
  const busy = options.busy ?? (() => false);
  const lanes = () => (busy() ? BUSY_LANES : IDLE_LANES);
  const { relayIntervalMs, sweepIntervalMs, overdueMs } = deps.config.webhooks;
  let stopped = false;
  let relayTimer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const relayTurn = async () => {
    try {
      while (!stopped && (await fanOutEvents(deps, BATCH, lanes)) === BATCH);
    } catch (error) {
      deps.logger.warn({ err: error }, 'webhook relay: fan-out failed; retrying');
    }
  };
  const schedule = () => {
    if (stopped) return;
    relayTimer = setTimeout(() => {
      running = relayTurn().finally(schedule);
    }, relayIntervalMs);
    relayTimer.unref();
  };
  running = relayTurn().finally(schedule);

  let sweeps = 0;
  const sweep = () =>
    sweepWebhookAttempts(deps, overdueMs)
      .then(async (count) => {
        if (count > 0) deps.logger.info({ count }, 're-enqueued overdue webhook attempts');
        // History older than the retention goes about once an hour (every sweep when sweeps are that far apart).
        if (sweeps++ % Math.max(1, Math.round(3_600_000 / sweepIntervalMs)) === 0) await pruneWebhookHistory(deps);
      })
      .catch((error) => deps.logger.warn({ err: error }, 'webhook sweep failed'));
  void sweep();
  const sweepTimer = setInterval(sweep, sweepIntervalMs);
  sweepTimer.unref();

  return {
    async stop() {
      stopped = true;
      clearTimeout(relayTimer);
      clearInterval(sweepTimer);
      await running;
    },
  };
}
