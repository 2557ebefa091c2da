import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSeedPlan, rowShape, seedListRows, seedProbes, seedSubscribers, type ListSeedPlan } from '../../bench/lib/list-seed.js';
import { percentile, summarise } from '../../bench/lib/http-load.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** The benchmark's seeded rows must be what the API reads back, or the benchmark measures nothing real. */
describe('bench list seeding', () => {
  const ROWS = 300;
  let server: TestServer;
  let plan: ListSeedPlan;

  beforeAll(async () => {
    server = await startTestServer();
    const environment = (await server.deps.store.tenancy.findEnvironmentByName('development'))!;
    plan = createSeedPlan(environment._id, environment._organizationId, { maxRows: ROWS, subscriberCount: 20, topicCount: 4, tenantCount: 3 });
    await seedSubscribers(server.container.db, server.deps.store, plan);
    await seedListRows(server.container.db, plan, 0, 120, { dialect: server.config.databaseUrl ? 'postgres' : 'sqlite', rowsPerTransaction: 50 });
    await seedListRows(server.container.db, plan, 120, ROWS, { dialect: server.config.databaseUrl ? 'postgres' : 'sqlite', rowsPerTransaction: 50 });
  });
  afterAll(async () => {
    await server?.close();
  });

  const rowsWhere = (predicate: (row: number) => boolean) => Array.from({ length: ROWS }, (_, row) => row).filter(predicate);

  it('lists every seeded message, newest first, with its subscriber', async () => {
    const response = await server.request('GET', '/v1/messages?limit=5');
    expect(response.status).toBe(200);
    expect(response.body.totalCount).toBe(ROWS);
    expect(response.body.data[0].transactionId).toBe(`bench-txn-${ROWS - 1}`);
    expect(response.body.data[0].subscriber.subscriberId).toBe(`bench-subscriber-${rowShape(plan, ROWS - 1).subscriber}`);
    const stored = await server.deps.store.messages.list(plan.environmentId, { page: 0, limit: 1 });
    expect(stored.totalCount).toBe(ROWS);
  });

  it('matches the subscriber, channel and context-key filters to the planned row shapes', async () => {
    const probes = seedProbes(plan, ROWS);
    const bySubscriber = await server.request('GET', `/v1/messages?subscriberId=${probes.subscriberId}`);
    expect(bySubscriber.body.totalCount).toBe(rowsWhere((row) => `bench-subscriber-${rowShape(plan, row).subscriber}` === probes.subscriberId).length);
    const byChannel = await server.request('GET', `/v1/messages?channel=${probes.channel}`);
    expect(byChannel.body.totalCount).toBe(rowsWhere((row) => rowShape(plan, row).channel === probes.channel).length);
    const byContext = await server.request('GET', `/v1/messages?contextKeys=${encodeURIComponent('tenant:acme-1')}`);
    expect(byContext.body.totalCount).toBe(rowsWhere((row) => rowShape(plan, row).tenant === 1).length);
    expect(byContext.body.totalCount).toBeGreaterThan(0);
  });

  it('lists events with their job and execution details, and by topic and time window', async () => {
    const probes = seedProbes(plan, ROWS);
    const byTransaction = await server.request('GET', `/v1/notifications?transactionId=${probes.transactionId}`);
    expect(byTransaction.status).toBe(200);
    expect(byTransaction.body.data).toHaveLength(1);
    expect(byTransaction.body.data[0].jobs).toHaveLength(1);
    expect(byTransaction.body.data[0].jobs[0].executionDetails.map((d: { status: string }) => d.status)).toEqual(['Pending', 'Success']);

    const topicRows = rowsWhere((row) => rowShape(plan, row).topic === 1);
    const byTopic = await server.request('GET', '/v1/notifications?topicKey=bench-topic-1&limit=50');
    expect(byTopic.body.data.map((e: { transactionId: string }) => e.transactionId)).toEqual(
      topicRows.reverse().slice(0, 50).map((row) => `bench-txn-${row}`),
    );

    const window = await server.request('GET', `/v1/notifications?after=${probes.after}&before=${probes.before}&limit=50`);
    expect(window.status).toBe(200);
    expect(window.body.data.length).toBeGreaterThan(0);
    for (const event of window.body.data) expect(event.createdAt > probes.after && event.createdAt < probes.before).toBe(true);
  });
});

describe('bench http-load summary', () => {
  it('computes nearest-rank percentiles and rates from per-request samples', () => {
    const samples = Float64Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(samples, 50)).toBe(50);
    expect(percentile(samples, 99)).toBe(99);
    const result = summarise({ latencies: samples.reverse(), statusCounts: { 200: 100, 500: 2 }, bytes: 1020, responses: 102, errors: 1, elapsedMs: 2000 });
    expect(result).toMatchObject({ ok: 100, notOk: 2, errors: 1, requestsPerSecond: 50, meanResponseBytes: 10 });
    expect(result.latencyMs).toMatchObject({ p50: 50, p99: 99, max: 100, mean: 50.5 });
  });
});
