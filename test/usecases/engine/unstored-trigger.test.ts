import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/domain/ids.js';
import { JobNotReadyError } from '../../../src/queue/ports.js';
import type { TriggerRecord } from '../../../src/store/ports.js';
import { UNSTORED_ERROR } from '../../../src/store/sql/trigger-repository.js';
import { processTrigger, UNSTORED_TRIGGER_WAIT_MS } from '../../../src/usecases/engine/process-trigger.js';
import { scopeOf, type Scope } from '../../helpers/factories.js';
import { startTestServer, type TestServer } from '../../helpers/test-server.js';
import { createWorkflow, messagesOf } from '../../worker/engine-helpers.js';

/**
 * A trigger's job added beside the trigger's insert (scaled out, acceptBesideInsert) carries `acceptedAt` and may start
 * before the row is committed, or when the insert stored nothing. processTrigger waits for the row (in process, then
 * as a job not ready yet), and past UNSTORED_TRIGGER_WAIT_MS claims the id with a tombstone so it can never be stored.
 */
describe('processTrigger: a job whose trigger row is missing', () => {
  let server: TestServer;
  let scope: Scope;
  let n = 0;

  beforeAll(async () => {
    server = await startTestServer({ worker: true, env: { HERALD_QUEUE_POLL_MS: '20' } });
    scope = await scopeOf(server.deps.store, server.devEnvironmentId);
    await createWorkflow(server, { workflowId: 'unstored', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Hello' } }] });
  });
  afterAll(async () => {
    await server?.close();
  });

  function record(): TriggerRecord {
    const now = new Date(server.deps.clock.now()).toISOString();
    return {
      _id: newId(server.deps.clock.now()),
      environmentId: scope.environmentId,
      organizationId: scope.organizationId,
      transactionId: `unstored-${n++}-${Math.random().toString(36).slice(2)}`,
      workflowId: 'unstored',
      request: { to: `unstored-sub-${n}`, payload: {} },
      state: 'accepted',
      createdAt: now,
      updatedAt: now,
    };
  }
  const payloadOf = (trigger: TriggerRecord, acceptedAt: number) => ({ environmentId: trigger.environmentId, triggerId: trigger._id, acceptedAt });

  it('asks to run again later, without delivering, while the row is not stored and the wait is not over', async () => {
    const trigger = record();
    const attempt = processTrigger(server.deps, payloadOf(trigger, server.deps.clock.now()));
    await expect(attempt).rejects.toBeInstanceOf(JobNotReadyError);
    await expect(attempt).rejects.toMatchObject({ retryInMs: expect.any(Number) });
    expect(await server.deps.store.triggers.get(trigger.environmentId, trigger._id)).toBeUndefined();
    // Stored now: the next run delivers it.
    await server.deps.store.triggers.create(trigger);
    await processTrigger(server.deps, payloadOf(trigger, server.deps.clock.now()));
    expect((await server.deps.store.triggers.get(trigger.environmentId, trigger._id))?.state).toBe('processed');
    await server.waitForIdle();
    expect(await messagesOf(server, trigger.transactionId)).toHaveLength(1);
  });

  it('finds a row committed while it re-reads in process, in the same run', async () => {
    const trigger = record();
    const running = processTrigger(server.deps, payloadOf(trigger, server.deps.clock.now()));
    await new Promise((resolve) => setTimeout(resolve, 3));
    await server.deps.store.triggers.create(trigger);
    await running;
    expect((await server.deps.store.triggers.get(trigger.environmentId, trigger._id))?.state).toBe('processed');
    await server.waitForIdle();
    expect(await messagesOf(server, trigger.transactionId)).toHaveLength(1);
  });

  it('claims the id of a trigger never stored once the wait is over: nothing is delivered and a late insert fails', async () => {
    const trigger = record();
    await processTrigger(server.deps, payloadOf(trigger, server.deps.clock.now() - UNSTORED_TRIGGER_WAIT_MS));
    const tombstone = await server.deps.store.triggers.get(trigger.environmentId, trigger._id);
    expect(tombstone).toMatchObject({ state: 'failed', error: UNSTORED_ERROR });
    expect(tombstone!.transactionId.length).toBeGreaterThan(255);
    await expect(server.deps.store.triggers.create(trigger)).rejects.toThrow();
    expect(await messagesOf(server, trigger.transactionId)).toHaveLength(0);
    // The job run again (a crash after the claim) finds the tombstone and does nothing.
    await processTrigger(server.deps, payloadOf(trigger, server.deps.clock.now() - UNSTORED_TRIGGER_WAIT_MS));
    expect(await server.deps.store.triggers.findByTransactionId(trigger.environmentId, trigger.transactionId)).toBeUndefined();
  });

  it('delivers a trigger stored before the wait ended, however late the job looks (the claim finds the row)', async () => {
    const trigger = record();
    await server.deps.store.triggers.create(trigger);
    expect(await server.deps.store.triggers.claimUnstored(trigger.environmentId, trigger._id)).toBe(false);
    await processTrigger(server.deps, payloadOf(trigger, server.deps.clock.now() - 10 * UNSTORED_TRIGGER_WAIT_MS));
    expect((await server.deps.store.triggers.get(trigger.environmentId, trigger._id))?.state).toBe('processed');
    await server.waitForIdle();
    expect(await messagesOf(server, trigger.transactionId)).toHaveLength(1);
  });

  it('waits for an insert of the id in flight before claiming it, and then delivers that trigger (PostgreSQL)', async (context) => {
    if (!server.config.databaseUrl) return context.skip();
    const trigger = record();
    let inserted!: () => void;
    const insertedSignal = new Promise<void>((resolve) => (inserted = resolve));
    // The API's insert, not committed yet when the claim comes.
    const insert = server.container.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('triggers')
        .values({
          id: trigger._id,
          environment_id: trigger.environmentId,
          organization_id: trigger.organizationId,
          transaction_id: trigger.transactionId,
          workflow_id: trigger.workflowId,
          request: JSON.stringify(trigger.request),
          state: 'accepted',
          error: null,
          created_at: trigger.createdAt,
          updated_at: trigger.updatedAt,
        })
        .execute();
      inserted();
      await new Promise((resolve) => setTimeout(resolve, 300));
    });
    await insertedSignal;
    const started = Date.now();
    await processTrigger(server.deps, payloadOf(trigger, server.deps.clock.now() - UNSTORED_TRIGGER_WAIT_MS));
    await insert;
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    expect((await server.deps.store.triggers.get(trigger.environmentId, trigger._id))?.state).toBe('processed');
    await server.waitForIdle();
    expect(await messagesOf(server, trigger.transactionId)).toHaveLength(1);
  });
});
