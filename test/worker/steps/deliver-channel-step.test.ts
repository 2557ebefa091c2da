import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueFollowUps } from '../../../src/usecases/engine/job-progress.js';
import { startTestServer, type TestServer } from '../../helpers/test-server.js';
import { createWorkflow, detailTexts, eventsOf, messagesOf, trigger } from '../engine-helpers.js';

/**
 * A rerun of an in-app step whose message was stored but whose job never recorded the end (a crash between the two
 * writes, or a queue redelivery): the step must not store a second message, and reports what the first run did.
 */
describe('in-app step rerun', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ worker: true });
    await createWorkflow(server, { workflowId: 'rerun-inbox', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Hello {{ subscriber.subscriberId }}' } }] });
  });
  afterAll(async () => {
    await server?.close();
  });

  async function rerunAsIfInterrupted(transactionId: string): Promise<void> {
    const [event] = await eventsOf(server, transactionId);
    const job = (await server.deps.store.jobs.get(server.devEnvironmentId, event.jobs[0]._id))!;
    await server.deps.store.jobs.save({ ...job, status: 'queued' });
    await enqueueFollowUps(server.deps, [{ environmentId: server.devEnvironmentId, jobId: job._id, dedupeKey: `rerun:${job._id}` }]);
    await server.waitForIdle();
  }

  it('keeps the one message and records that an earlier run created it', async () => {
    expect((await trigger(server, { name: 'rerun-inbox', to: 'rerun-1', transactionId: 'rerun-1' })).status).toBe(201);
    await server.waitForIdle();
    const [first] = await messagesOf(server, 'rerun-1');
    expect(first.content).toBe('Hello rerun-1');

    await rerunAsIfInterrupted('rerun-1');
    const messages = await messagesOf(server, 'rerun-1');
    expect(messages.map((message: { _id: string }) => message._id)).toEqual([first._id]);
    const [event] = await eventsOf(server, 'rerun-1');
    expect(event.jobs[0].status).toBe('completed');
    expect(detailTexts(event.jobs[0])).toContain('Success: Message already created by an earlier run of this step');
  });

  it('reports the earlier message, not a failure, when the template no longer renders for the subscriber', async () => {
    await createWorkflow(server, { workflowId: 'rerun-strict', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: '{{ payload.name | upcase }}' } }] });
    expect((await trigger(server, { name: 'rerun-strict', to: 'rerun-2', transactionId: 'rerun-2', payload: { name: 'ada' } })).status).toBe(201);
    await server.waitForIdle();
    const [first] = await messagesOf(server, 'rerun-2');
    expect(first.content).toBe('ADA');

    // The job keeps the step it was created with; an unknown filter makes that step's template fail to render now.
    const [event] = await eventsOf(server, 'rerun-2');
    const job = (await server.deps.store.jobs.get(server.devEnvironmentId, event.jobs[0]._id))!;
    await server.deps.store.jobs.save({ ...job, step: { ...job.step, controlVariables: { body: '{{ payload.name | no_such_filter }}' } } });
    await rerunAsIfInterrupted('rerun-2');
    expect((await messagesOf(server, 'rerun-2')).map((message: { _id: string }) => message._id)).toEqual([first._id]);
    const [after] = await eventsOf(server, 'rerun-2');
    expect(after.jobs[0].status).toBe('completed');
    expect(detailTexts(after.jobs[0])).toContain('Success: Message already created by an earlier run of this step');
  });
});
