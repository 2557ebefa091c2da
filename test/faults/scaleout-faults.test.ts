import { afterEach, describe, expect, it } from 'vitest';
import { privateServicesAvailable } from '../helpers/private-services.js';
import {
  MESSAGES_PER_TRIGGER,
  api,
  createFaultWorkflow,
  fireTriggers,
  queueCounts,
  sleep,
  startCluster,
  waitForDelivery,
  type Cluster,
  type DeliveryReport,
  type TriggerLoadResult,
} from './cluster.js';

/**
 * Scale-out under faults (issue 5): 2 API and 2 worker processes over a private PostgreSQL and Redis,
 * 2,000 triggers to 2 subscribers through a 2-step in-app workflow, spread over both APIs. Mid-run one
 * worker is SIGKILLed, or Redis is killed and restarted, or PostgreSQL is restarted. Afterwards every
 * trigger answered 201 has exactly one message per step per subscriber: none lost, none duplicated.
 * While a backend is down the API answers 503 with Retry-After (and no other 5xx); it recovers by itself.
 */
const TRIGGERS = Number(process.env.HERALD_FAULTS_TRIGGERS ?? 2000);
const CONCURRENCY = 16;
/** Settled triggers before the fault: early enough that most of the run happens during and after it. */
const FAULT_AT = Math.floor(TRIGGERS * 0.3);
/** How long Redis or PostgreSQL stays down: longer than a job's whole retry budget (1 + 2 + 4 s by default). */
const OUTAGE_MS = Number(process.env.HERALD_FAULTS_OUTAGE_MS ?? 10_000);
/** They need no shared service and are mode-independent: `npm test` runs them once, in its scale-out pass. */
const embeddedPass = process.env.HERALD_TEST_MODE === 'embedded';
if (embeddedPass) console.warn('[herald tests] the scale-out fault tests run in the scale-out pass only');
const available = !embeddedPass && privateServicesAvailable();

let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
});

function describeOutcome(name: string, load: TriggerLoadResult, report: DeliveryReport): void {
  console.info(
    `[faults] ${name}: ${load.accepted.length} accepted in ${load.durationMs} ms, ${load.unavailable} x 503, ` +
      `${load.networkErrors} connection errors, ${load.abandoned.length} abandoned; drained in ${report.drainMs} ms; ` +
      `${report.totalMessages} messages; queue ${JSON.stringify(report.queue)}`,
  );
}

function expectEveryAcceptedTriggerDeliveredOnce(load: TriggerLoadResult, report: DeliveryReport): void {
  expect(report.wrongCount.slice(0, 5), `${report.wrongCount.length} accepted triggers without exactly ${MESSAGES_PER_TRIGGER} messages`).toEqual([]);
  expect(report.duplicated.slice(0, 5), 'transactions with two messages for one subscriber and step').toEqual([]);
  expect(report.statuses).toEqual([]);
  expect(report.unfinishedJobs).toBe(0);
  expect(report.unprocessedTriggers).toBe(0);
  expect(report.queue.failed).toBe(0);
  // Triggers never answered 201 may or may not have been delivered, but never more than once.
  expect(report.totalMessages).toBeLessThanOrEqual(MESSAGES_PER_TRIGGER * (load.accepted.length + load.abandoned.length));
}

async function expectApisHealthy(current: Cluster): Promise<void> {
  for (const apiProcess of current.apis) {
    expect(apiProcess.child.exitCode, apiProcess.output()).toBeNull();
    const health = await fetch(`${apiProcess.url}/health`);
    expect(health.status).toBe(200);
  }
}

async function expectMessagesThroughApi(current: Cluster, transactionId: string): Promise<void> {
  for (const apiProcess of current.apis) {
    const response = await api(apiProcess.url, 'GET', `/v1/messages?transactionId=${transactionId}`);
    expect(response.status).toBe(200);
    expect((await response.json()).totalCount).toBe(MESSAGES_PER_TRIGGER);
  }
}

describe.skipIf(!available)('scale-out faults', () => {
  it('SIGKILL of one worker mid-run loses and duplicates nothing', { timeout: 300_000 }, async () => {
    cluster = await startCluster({ apis: 2, workers: 2 });
    const current = cluster;
    await createFaultWorkflow(current);
    let queueAtKill: Record<string, number> | undefined;
    const load = await fireTriggers(current, {
      prefix: 'kill',
      total: TRIGGERS,
      concurrency: CONCURRENCY,
      retryPauseMs: 200,
      giveUpAfterMs: 30_000,
      onSettled: (settled) => {
        if (settled !== FAULT_AT) return;
        current.workers[0].child.kill('SIGKILL');
        void queueCounts(current).then((counts) => (queueAtKill = counts));
      },
    });
    await current.workers[0].exited;
    expect(current.workers[0].child.signalCode).toBe('SIGKILL');
    expect(current.workers[1].child.exitCode).toBeNull();
    expect(load.unexpected).toEqual([]);
    expect(load.accepted).toHaveLength(TRIGGERS);

    const report = await waitForDelivery(current, load.accepted, 150_000);
    describeOutcome('worker SIGKILL', load, report);
    console.info(`[faults] queue when the worker was killed: ${JSON.stringify(queueAtKill)}`);
    expectEveryAcceptedTriggerDeliveredOnce(load, report);
    await expectMessagesThroughApi(current, load.accepted[0]);
  });

  it('Redis killed and restarted mid-run: 503 + Retry-After while down, recovery, nothing lost', { timeout: 300_000 }, async () => {
    // Redis as BullMQ needs it in production: an append-only file fsynced on every write (see the report).
    cluster = await startCluster({ apis: 2, workers: 2, redis: { persistent: true } });
    await expectOutageSurvived(cluster, 'redis', 'Redis restart', {
      stop: (current) => current.redis.kill(),
      start: (current) => current.redis.start(),
    });
  });

  it('PostgreSQL restarted mid-run: 503 + Retry-After while down, recovery, nothing lost', { timeout: 300_000 }, async () => {
    cluster = await startCluster({ apis: 2, workers: 2 });
    await expectOutageSurvived(cluster, 'pg', 'PostgreSQL restart', {
      stop: (current) => current.postgres.stop('fast'),
      start: (current) => current.postgres.start(),
    });
  });
});

/**
 * Fires the triggers, takes a service down once FAULT_AT of them have been answered and brings it back after
 * OUTAGE_MS; then checks that every refusal meanwhile was a 503 with Retry-After, that every accepted trigger was
 * delivered exactly once, and that every process is still alive and healthy.
 */
async function expectOutageSurvived(
  current: Cluster,
  prefix: string,
  label: string,
  service: { stop(current: Cluster): Promise<unknown>; start(current: Cluster): Promise<unknown> },
): Promise<void> {
  await createFaultWorkflow(current);
  let outage: Promise<void> | undefined;
  const load = await fireTriggers(current, {
    prefix,
    total: TRIGGERS,
    concurrency: CONCURRENCY,
    retryPauseMs: 200,
    giveUpAfterMs: 60_000,
    onSettled: (settled) => {
      if (settled !== FAULT_AT) return;
      outage = (async () => {
        await service.stop(current);
        await sleep(OUTAGE_MS);
        await service.start(current);
      })();
    },
  });
  await outage;
  expect(load.unavailable).toBeGreaterThan(0);
  expect(load.unavailableWithoutRetryAfter).toBe(0);
  expect(load.unexpected).toEqual([]);
  expect(load.networkErrors).toBe(0);
  expect(load.abandoned).toEqual([]);

  const report = await waitForDelivery(current, load.accepted, 150_000);
  describeOutcome(label, load, report);
  expectEveryAcceptedTriggerDeliveredOnce(load, report);
  for (const worker of current.workers) expect(worker.child.exitCode, worker.output()).toBeNull();
  await expectApisHealthy(current);
  await expectMessagesThroughApi(current, load.accepted.at(-1)!);
}
