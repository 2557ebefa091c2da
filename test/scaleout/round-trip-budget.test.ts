import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servicesAvailable } from '../helpers/databases.js';
import { SCALEOUT_SECRET, startScaleoutProcesses, type ScaleoutProcesses } from '../helpers/scaleout-processes.js';

/**
 * The round-trip budget of the scale-out mode (issue 24): SQL statements and Redis commands per trigger, per in-app
 * delivery and per list page, counted from the drivers inside real `herald api` and `herald worker` processes by the
 * same preloaded wrapper `npm run bench:http` uses. A change that adds a round trip to one of these paths fails here
 * and must raise the budget on purpose, with its reason.
 *
 * Operations run one at a time, so the API process's counts are exact. The worker's include its idle queue traffic
 * while it waits for the next job (BullMQ's blocking reads), so its budget has that headroom.
 */
const COUNTER = fileURLToPath(new URL('../../bench/lib/round-trip-counter.mjs', import.meta.url));
const PROCESS_TEST_MS = 240_000;

interface Counts { sqlStatements: number; redisCommands: number; redisRoundTrips: number }

/** Current figures (2026-11-26), per operation. */
const BUDGET = {
  // Issue #24: 1 SQL (the trigger row; the workflow is cached per process) and 2 Redis commands (the rate limit's one
  // script, the job's add; under load adds share one pipeline, and trigger rows one insert: triggerBurst).
  trigger: { sqlStatements: 1, redisCommands: 2 },
  // 20 triggers sent at once (session 15): the trigger rows of requests that arrive while one insert is in flight go
  // out as one statement, so a burst makes fewer statements than triggers (it made 20 before: 1 per trigger). Measured
  // 0.5 per trigger here (the 20 requests open their connections one after another, so they arrive spread out; under
  // bench:http's steady load 0.07-0.09). Session 26: a clean clone's run at load ~5 measured 0.85 (17 of the 20
  // arrived one by one), so how many share an insert is the machine's timing, not the code's: the budget is the single
  // trigger's 1 statement (a burst must never cost more per trigger), and the sharing is printed, not pinned.
  triggerBurst: { sqlStatements: 1, redisCommands: 2 },
  // Measured 5.6-7.2 SQL and 7.9-8.1 Redis commands (2026-11-26): 5 statements (the trigger, the subscriber, the event
  // id's owners, the preferences, and one write of the event, its jobs, the message, their counts and the trigger's
  // state: Store.batch) plus the webhook outbox's polls and the worker's blocking reads while idle, which vary with
  // timing, hence the headroom. Before the held writes it was 8.9 (three writes more: the event, the job's final save,
  // the trigger's state). Redis 7 since session 14 (was 8): the delivery's two realtime publishes are one script call.
  delivery: { sqlStatements: 8, redisCommands: 8 },
  // To a subscriberId seen for the first time (the subscriber is created): measured 5.0 SQL (2026-11-26, session 13):
  // the trigger, the subscriber look-up, the event id's owners, and one write that also inserts the subscriber (its
  // preferences are not read: a new subscriber has none), plus the idle polls as above. It was 6 (the subscriber's own
  // insert and the preferences read).
  // Session 18: the event id's owners are no longer read (PostgreSQL's held write refuses a taken id itself): measured
  // 4.2 (once 5.2, the idle polls), 5.0-5.5 before. The budget stays: one at a time, the idle polls vary by about one.
  deliveryToNewSubscriber: { sqlStatements: 7, redisCommands: 8 },
  // The worker's statements per delivery of triggerBurst's 20 (session 18): jobs in flight together read their
  // triggers and subscribers in one statement per batch, and the owners' read is gone: measured 3.15 SQL, 3.25 Redis
  // (the realtime publishes of deliveries ending while one is in flight share a command); before, 5.3 and 3.8.
  // Session 19: the subscriber reads are one statement each again (their batch's generic plan walked the environment's
  // subscribers, BENCHMARKS.md): measured 3.7 SQL, 2.95-3.1 Redis. Redis budget 5 -> 4.
  deliveryBurst: { sqlStatements: 4, redisCommands: 4 },
  // A page: the rate limit's one script (the key and the caller come from the process's cache, kept fresh by the
  // revocation channel). Measured 3 SQL and 1 Redis for both (2026-11-26); the messages page 2 SQL since its statement
  // reads its counter too (session 13): the page with its count, and the page's subscribers. 1 since session 17: a
  // page of one subscriber's messages reads the page, its count and its subscribers' records in one prepared statement.
  messagesPage: { sqlStatements: 1, redisCommands: 1 },
  // The page, then its jobs and execution details in one statement (issue 24; they were two). Session 16: one
  // statement when every event of the page has a kept text whose print matches (the worker keeps them within 500 ms of
  // the event's end); the newest events of this page end just before it is read, so measured 1.4.
  notificationsPage: { sqlStatements: 2, redisCommands: 1 },
};

describe('scale-out round trips per operation', () => {
  let processes: ScaleoutProcesses | undefined;
  let counterDir: string;

  beforeAll(async () => {
    if (!(await servicesAvailable(['PostgreSQL', 'Redis']))) return;
    counterDir = mkdtempSync(join(tmpdir(), 'herald-round-trips-'));
    processes = await startScaleoutProcesses({
      apis: 1,
      workers: 1,
      env: { NODE_OPTIONS: `--import ${COUNTER}`, BENCH_ROUND_TRIPS_DIR: counterDir },
    });
  }, PROCESS_TEST_MS);

  afterAll(async () => {
    await processes?.close();
    if (counterDir) rmSync(counterDir, { recursive: true, force: true });
  });

  async function counts(child: ChildProcess): Promise<Counts> {
    const file = join(counterDir, `${child.pid}.json`);
    rmSync(file, { force: true });
    child.kill('SIGUSR2');
    for (let i = 0; i < 200; i++) {
      try {
        return JSON.parse(readFileSync(file, 'utf8')) as Counts;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    throw new Error('no round-trip counts written');
  }

  const round = (value: number) => Math.round(value * 100) / 100;
  const perOperation = (before: Counts, after: Counts, n: number) => ({
    sqlStatements: round((after.sqlStatements - before.sqlStatements) / n),
    redisCommands: round((after.redisCommands - before.redisCommands) / n),
  });

  it('keeps triggers, deliveries and list pages within their budget', async (context) => {
    if (!processes) return context.skip();
    const url = processes.apis[0]!.url;
    const api = processes.apis[0]!.child;
    const worker = processes.workers[0]!.child;
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `ApiKey ${SCALEOUT_SECRET}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      expect(response.status, `${method} ${path}`).toBeLessThan(300);
      return response.json() as Promise<any>;
    };
    const inAppCount = async () => (await call('GET', '/v1/messages?channel=in_app&limit=1')).totalCount as number;
    const untilMessages = async (expected: number) => {
      const deadline = Date.now() + 30_000;
      while ((await inAppCount()) < expected) {
        if (Date.now() > deadline) throw new Error(`fewer than ${expected} in-app messages after 30 s`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };

    await call('POST', '/v1/integrations', { providerId: 'novu', channel: 'in_app', active: true });
    await call('POST', '/v2/workflows', { workflowId: 'budget', name: 'budget', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Hi {{subscriber.subscriberId}}' } }] });
    await call('POST', '/v2/subscribers', { subscriberId: 'budget-subscriber' });
    // Warm-up: the first trigger fills the per-process caches (keys, workflows, integrations).
    await call('POST', '/v1/events/trigger', { name: 'budget', to: 'budget-subscriber', payload: {} });
    await untilMessages(1);

    const triggers = 10;
    let trigger = { sqlStatements: 0, redisCommands: 0 };
    let delivery = { sqlStatements: 0, redisCommands: 0 };
    for (let i = 0; i < triggers; i++) {
      const [apiBefore, workerBefore] = await Promise.all([counts(api), counts(worker)]);
      await call('POST', '/v1/events/trigger', { name: 'budget', to: 'budget-subscriber', payload: { i } });
      const apiAfterTrigger = await counts(api);
      await untilMessages(i + 2);
      const workerAfter = await counts(worker);
      const t = perOperation(apiBefore, apiAfterTrigger, 1);
      const d = perOperation(workerBefore, workerAfter, 1);
      trigger = { sqlStatements: trigger.sqlStatements + t.sqlStatements / triggers, redisCommands: trigger.redisCommands + t.redisCommands / triggers };
      delivery = { sqlStatements: delivery.sqlStatements + d.sqlStatements / triggers, redisCommands: delivery.redisCommands + d.redisCommands / triggers };
    }

    const burstSize = 20;
    const [burstBefore, burstWorkerBefore] = await Promise.all([counts(api), counts(worker)]);
    await Promise.all(Array.from({ length: burstSize }, (_, i) => call('POST', '/v1/events/trigger', { name: 'budget', to: 'budget-subscriber', payload: { burst: i } })));
    const triggerBurst = perOperation(burstBefore, await counts(api), burstSize);
    await untilMessages(triggers + 1 + burstSize);
    const deliveryBurst = perOperation(burstWorkerBefore, await counts(worker), burstSize);

    let deliveryToNewSubscriber = { sqlStatements: 0, redisCommands: 0 };
    for (let i = 0; i < triggers; i++) {
      const workerBefore = await counts(worker);
      await call('POST', '/v1/events/trigger', { name: 'budget', to: `budget-new-${i}`, payload: { i } });
      await untilMessages(triggers + burstSize + i + 2);
      const d = perOperation(workerBefore, await counts(worker), 1);
      deliveryToNewSubscriber = {
        sqlStatements: deliveryToNewSubscriber.sqlStatements + d.sqlStatements / triggers,
        redisCommands: deliveryToNewSubscriber.redisCommands + d.redisCommands / triggers,
      };
    }

    const page = async (path: string) => {
      const before = await counts(api);
      for (let i = 0; i < 10; i++) await call('GET', path);
      return perOperation(before, await counts(api), 10);
    };
    const messagesPage = await page('/v1/messages?subscriberId=budget-subscriber&limit=10');
    const notificationsPage = await page('/v1/notifications?limit=10');

    const measured = {
      trigger: perOperation({ sqlStatements: 0, redisCommands: 0, redisRoundTrips: 0 }, { ...trigger, redisRoundTrips: 0 }, 1),
      delivery: perOperation({ sqlStatements: 0, redisCommands: 0, redisRoundTrips: 0 }, { ...delivery, redisRoundTrips: 0 }, 1),
      deliveryToNewSubscriber: perOperation({ sqlStatements: 0, redisCommands: 0, redisRoundTrips: 0 }, { ...deliveryToNewSubscriber, redisRoundTrips: 0 }, 1),
      triggerBurst,
      deliveryBurst,
      messagesPage,
      notificationsPage,
    };
    console.log(`[round trips] ${JSON.stringify(measured)}`);
    for (const [operation, budget] of Object.entries(BUDGET)) {
      const figures = measured[operation as keyof typeof measured];
      expect(figures.sqlStatements, `${operation}: SQL statements`).toBeLessThanOrEqual(budget.sqlStatements);
      expect(figures.redisCommands, `${operation}: Redis commands`).toBeLessThanOrEqual(budget.redisCommands);
    }
  }, PROCESS_TEST_MS);
});
