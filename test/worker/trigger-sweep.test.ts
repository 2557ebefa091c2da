import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createWorkflow, messagesOf } from './engine-helpers.js';

/**
 * A trigger row stored as `accepted` whose queue job was never written (the enqueue failed after the row was stored
 * and the client did not repeat the request) is processed by the worker's periodic sweep, without a restart.
 */
describe('accepted-trigger sweep', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ worker: true, env: { HERALD_TRIGGER_SWEEP_MS: '100' } });
    await createWorkflow(server, { workflowId: 'swept', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Swept {{ payload.n }}' } }] });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('processes a trigger that has no queue job once it is older than the sweep interval', async () => {
    const environment = await server.deps.store.tenancy.getEnvironment(server.devEnvironmentId);
    const now = new Date().toISOString();
    const { created } = await server.deps.store.triggers.create({
      _id: '6a1b2c3d4e5f60718293a4b5',
      environmentId: server.devEnvironmentId,
      organizationId: environment!._organizationId,
      transactionId: 'never-enqueued',
      workflowId: 'swept',
      request: { name: 'swept', to: 'sweep-1', payload: { n: 7 } },
      state: 'accepted',
      createdAt: now,
      updatedAt: now,
    });
    expect(created).toBe(true);

    // The trigger is marked processed after its first step ran (and stored the message): wait for both.
    const deadline = Date.now() + 10_000;
    let messages: any[] = [];
    let state: string | undefined;
    while ((messages.length === 0 || state !== 'processed') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      messages = await messagesOf(server, 'never-enqueued');
      state = (await server.deps.store.triggers.get(server.devEnvironmentId, '6a1b2c3d4e5f60718293a4b5'))?.state;
    }
    expect(messages).toHaveLength(1);
    expect(messages[0].content).toBe('Swept 7');
    expect(state).toBe('processed');
  });
});
