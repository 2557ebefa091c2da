import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { UNSTORED_ERROR } from '../../src/store/sql/trigger-repository.js';
import { UNSTORED_TRIGGER_WAIT_MS } from '../../src/usecases/engine/process-trigger.js';
import { scaleoutModeRequested } from '../helpers/databases.js';
import { ManualClock, startTestServer, type TestServer } from '../helpers/test-server.js';
import { createWorkflow, messagesOf, trigger } from '../worker/engine-helpers.js';

/**
 * Scaled out, a trigger's job is added to BullMQ beside the trigger's insert instead of after it (acceptBesideInsert):
 * the job may start before the row is committed, and exists even when the insert stores nothing. Every outcome of the
 * insert, in both modes: a 201 is delivered once; an insert that fails or repeats a transactionId delivers nothing more
 * (scaled out, the id it did not store is claimed with a tombstone, by the API at once or by the job after its wait).
 */
const scaleout = scaleoutModeRequested();

async function tombstones(server: TestServer): Promise<number> {
  const { count } = await server.container.db
    .selectFrom('triggers')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('error', '=', UNSTORED_ERROR)
    .executeTakeFirstOrThrow();
  return Number(count);
}

const workflow = { workflowId: 'beside', name: 'Beside', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'n={{ payload.n }}' } }] };

describe('a trigger whose job is added beside its insert', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ worker: true, env: { HERALD_QUEUE_POLL_MS: '20' } });
    await createWorkflow(server, workflow);
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('is delivered once when its job starts before the row is committed', async () => {
    const create = server.deps.store.triggers.create.bind(server.deps.store.triggers);
    // The insert takes 250 ms: scaled out, the worker has the job long before the row exists.
    vi.spyOn(server.deps.store.triggers, 'create').mockImplementation(async (record) => {
      await new Promise((resolve) => setTimeout(resolve, 250));
      return create(record);
    });
    const response = await trigger(server, { name: 'beside', to: 'beside-late', payload: { n: 1 }, transactionId: 'beside-late-tx' });
    expect(response.status, response.text).toBe(201);
    await server.waitForIdle();
    expect((await messagesOf(server, 'beside-late-tx')).map((message) => message.content)).toEqual(['n=1']);
  });

  it('answers an insert that fails with an error and delivers nothing', async () => {
    const before = await tombstones(server);
    vi.spyOn(server.deps.store.triggers, 'create').mockImplementation(async () => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      throw new Error('the insert failed');
    });
    const response = await trigger(server, { name: 'beside', to: 'beside-failed', payload: { n: 2 }, transactionId: 'beside-failed-tx' });
    expect(response.status).toBe(500);
    vi.restoreAllMocks();
    // The API claimed the id its insert did not store: the job finds the tombstone at once.
    await server.waitForIdle({ timeoutMs: 5_000 });
    expect(await tombstones(server)).toBe(before + (scaleout ? 1 : 0));
    expect(await messagesOf(server, 'beside-failed-tx')).toEqual([]);
    // The transactionId is free: the client's retry is accepted and delivered once.
    const retry = await trigger(server, { name: 'beside', to: 'beside-failed', payload: { n: 3 }, transactionId: 'beside-failed-tx' });
    expect(retry.status, retry.text).toBe(201);
    await server.waitForIdle();
    expect((await messagesOf(server, 'beside-failed-tx')).map((message) => message.content)).toEqual(['n=3']);
  });

  it('repeats a transactionId: one delivery, and the repeat’s job finds its id claimed at once', async () => {
    const before = await tombstones(server);
    const first = await trigger(server, { name: 'beside', to: 'beside-repeat', payload: { n: 4 }, transactionId: 'beside-repeat-tx' });
    const repeats = await Promise.all(
      [5, 6, 7].map((n) => trigger(server, { name: 'beside', to: 'beside-repeat', payload: { n }, transactionId: 'beside-repeat-tx' })),
    );
    expect([first, ...repeats].map((response) => response.status)).toEqual([201, 201, 201, 201]);
    expect(repeats.map((response) => response.body.data.transactionId)).toEqual(Array(3).fill('beside-repeat-tx'));
    await server.waitForIdle({ timeoutMs: 5_000 });
    expect((await messagesOf(server, 'beside-repeat-tx')).map((message) => message.content)).toEqual(['n=4']);
    expect(await tombstones(server)).toBe(before + (scaleout ? 3 : 0));
  });
});

describe('a trigger whose insert and claim both failed', () => {
  let server: TestServer;
  const clock = new ManualClock(Date.now());

  beforeAll(async () => {
    server = await startTestServer({ worker: true, clock, env: { HERALD_QUEUE_POLL_MS: '20' } });
    await createWorkflow(server, workflow);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await server?.close();
  });

  it('is claimed by its job once the wait is over, and delivers nothing', async () => {
    const before = await tombstones(server);
    const claim = server.deps.store.triggers.claimUnstored.bind(server.deps.store.triggers);
    let apiClaims = 0;
    vi.spyOn(server.deps.store.triggers, 'create').mockRejectedValueOnce(new Error('the insert failed'));
    // The API's claim fails (its process died, say); the job's own, after the wait, goes through.
    vi.spyOn(server.deps.store.triggers, 'claimUnstored').mockImplementation(async (environmentId, id) => {
      if (apiClaims++ === 0) throw new Error('the claim failed');
      return claim(environmentId, id);
    });
    const response = await trigger(server, { name: 'beside', to: 'beside-orphan', payload: { n: 8 }, transactionId: 'beside-orphan-tx' });
    expect(response.status).toBe(500);
    if (scaleout) {
      // The job waits for a row that never comes...
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await tombstones(server)).toBe(before);
      expect(apiClaims).toBe(1);
      // ...until the wait is over.
      clock.advance(UNSTORED_TRIGGER_WAIT_MS);
    }
    await server.waitForIdle({ timeoutMs: 5_000 });
    expect(await tombstones(server)).toBe(before + (scaleout ? 1 : 0));
    expect(await messagesOf(server, 'beside-orphan-tx')).toEqual([]);
  });
});
