import type { Deps } from '../usecases/deps.js';
import { fanOutEvents } from '../usecases/webhooks/fan-out-events.js';
import { pruneWebhookHistory, sweepWebhookAttempts } from '../usecases/webhooks/sweep-webhook-attempts.js';

export interface WebhookRelay {
  stop(): Promise<void>;
}

const BATCH = 500;

/**
 * The worker's outbox relay: fans recorded events out to endpoints every `relayIntervalMs`, at once again while
 * batches come back full; and sweeps overdue attempts (lost jobs) every `sweepIntervalMs`. With no endpoints there
 * are no events, and a relay turn is one indexed read of an empty partial index. The sweep also deletes history older
 * than config.webhooks.retentionDays.
 */
export function startWebhookRelay(deps: Deps): WebhookRelay {
  const { relayIntervalMs, sweepIntervalMs, overdueMs } = deps.config.webhooks;
  let stopped = false;
  let relayTimer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const relayTurn = async () => {
    try {
      while (!stopped && (await fanOutEvents(deps, BATCH)) === BATCH);
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
