import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeBodyLimit, takesLargeBody } from '../../src/http/body-limits.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { expectErrorBody } from '../helpers/shape.js';
import { createWorkflow, eventsOf, messagesOf, trigger } from '../worker/engine-helpers.js';

describe('takesLargeBody', () => {
  it('matches Novu’s 20 MB route families and the paths below them, nothing else', () => {
    for (const path of ['/v1/events/trigger', '/v1/events/trigger/bulk', '/v1/events/trigger/broadcast', '/v1/events', '/v1/workflows', '/v1/workflows/:workflowId', '/v1/bridge/sync', '/v1/bridge/diff', '/v1/layouts', '/v1/notification-templates/:id']) {
      expect(takesLargeBody(path), path).toBe(true);
    }
    for (const path of ['/v1/subscribers', '/v1/eventsx', '/v2/workflows', '/v1/bridge/status', '/v1/integrations/:id', '/v1/messages', '/']) {
      expect(takesLargeBody(path), path).toBe(false);
    }
  });

  it('never gives those routes less than the general limit', () => {
    expect(routeBodyLimit('/v1/events/trigger', { bodyLimitBytes: 1_000, largeBodyLimitBytes: 5_000 })).toBe(5_000);
    expect(routeBodyLimit('/v1/events/trigger', { bodyLimitBytes: 9_000, largeBodyLimitBytes: 5_000 })).toBe(9_000);
    expect(routeBodyLimit('/v1/subscribers', { bodyLimitBytes: 1_000, largeBodyLimitBytes: 5_000 })).toBeUndefined();
  });
});

const workflow = {
  workflowId: 'big-payload',
  name: 'Big payload',
  steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'note of {{ payload.note | size }} characters' } }],
};

describe('a trigger larger than the general body limit (Novu reads 20 MB on /v1/events)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ worker: true, env: { HERALD_QUEUE_POLL_MS: '20' } });
    await createWorkflow(server, workflow);
  });
  afterAll(async () => server?.close());

  it('accepts and delivers a 2 MB trigger and a 2 MB bulk trigger with the default limits', async () => {
    expect(server.config.bodyLimitBytes).toBe(1024 * 1024);
    expect(server.config.largeBodyLimitBytes).toBe(20 * 1024 * 1024);
    const note = 'n'.repeat(2_000_000);
    const single = await trigger(server, { name: 'big-payload', to: 'big-1', payload: { note } });
    expect(single.status, single.text.slice(0, 300)).toBe(201);
    const bulk = await server.request('POST', '/v1/events/trigger/bulk', {
      body: { events: [1, 2, 3].map((n) => ({ name: 'big-payload', to: `big-bulk-${n}`, payload: { note: 'b'.repeat(700_000) } })) },
    });
    expect(bulk.status, bulk.text.slice(0, 300)).toBe(201);
    expect(bulk.body.data.map((item: { acknowledged: boolean }) => item.acknowledged)).toEqual([true, true, true]);
    await server.waitForIdle();
    expect((await eventsOf(server, single.body.data.transactionId)).length).toBe(1);
    const [message] = await messagesOf(server, single.body.data.transactionId);
    expect(message?.content).toBe('note of 2000000 characters');
    expect((await messagesOf(server, bulk.body.data[2].transactionId))[0]?.content).toBe('note of 700000 characters');
  });

  it('still answers 413 above the larger limit, and on other routes above the general one, changing nothing', async () => {
    const tooLarge = await server.request('POST', '/v1/events/trigger', { rawBody: JSON.stringify({ name: 'big-payload', to: 'big-2', transactionId: 'big-2-tx', payload: { note: 'x'.repeat(21 * 1024 * 1024) } }), headers: { 'content-type': 'application/json' } });
    expect(tooLarge.status).toBe(413);
    expectErrorBody(tooLarge.body, 413, '/v1/events/trigger');
    const subscriber = await server.request('PUT', '/v1/subscribers/big-3', { body: { firstName: 'x'.repeat(2_000_000) } });
    expect(subscriber.status).toBe(413);
    expectErrorBody(subscriber.body, 413, '/v1/subscribers/big-3');
    expect((await server.request('GET', '/v1/subscribers/big-3')).status).toBe(404);
    expect(await eventsOf(server, 'big-2-tx')).toEqual([]);
  });
});

describe('HERALD_LARGE_BODY_LIMIT_BYTES', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { HERALD_BODY_LIMIT_BYTES: '2048', HERALD_LARGE_BODY_LIMIT_BYTES: '8192' } });
    await createWorkflow(server, workflow);
  });
  afterAll(async () => server?.close());

  it('sets the limit of the trigger, workflow and bridge routes apart from the others', async () => {
    const note = 'x'.repeat(4_000);
    expect((await trigger(server, { name: 'big-payload', to: 'limit-1', payload: { note } })).status).toBe(201);
    expect((await trigger(server, { name: 'big-payload', to: 'limit-1', payload: { note: note.repeat(3) } })).status).toBe(413);
    const sync = await server.request('POST', '/v1/bridge/sync?source=cli', { body: { bridgeUrl: 'http://127.0.0.1:1/api/novu', padding: note } });
    expect(sync.status).not.toBe(413);
    expect((await server.request('PUT', '/v1/subscribers/limit-1', { body: { firstName: note } })).status).toBe(413);
  });
});
