import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scaleoutModeRequested, servicesAvailable } from '../helpers/databases.js';
import { SCALEOUT_SECRET, startScaleoutProcesses, type ScaleoutProcesses } from '../helpers/scaleout-processes.js';
import { expectErrorBody } from '../helpers/shape.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { heraldCaller, inboxSession, openInboxSocket, refusedHandshake, type HeraldCall, type InboxSocket } from '../realtime/inbox-socket-helpers.js';

/**
 * Issue #20, point 9: deleting a subscriber ends their Inbox sessions at once. Their token is refused right after the
 * DELETE (401, also where it was verified and remembered before), their open sockets are disconnected, and a
 * subscriber created again with the same subscriberId does not bring the old token back.
 */
const INBOX_HEADERS = { 'novu-api-version': '2024-06-26', 'novu-client-version': '@novu/js@3.19.2' };

async function inboxCount(url: string, token: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${url}/v1/inbox/notifications/count?filters=${encodeURIComponent('[{}]')}`, {
    headers: { authorization: `Bearer ${token}`, ...INBOX_HEADERS },
  });
  return { status: response.status, body: await response.json() };
}

/** Resolves with the reason once the socket is disconnected (by the server). */
function disconnection(socket: InboxSocket, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    if (!socket.socket.connected) return resolve('already disconnected');
    const timer = setTimeout(() => reject(new Error(`socket still connected after ${timeoutMs} ms`)), timeoutMs);
    socket.socket.once('disconnect', (reason) => {
      clearTimeout(timer);
      resolve(reason);
    });
  });
}

describe('a deleted subscriber loses their tokens (one server)', () => {
  let server: TestServer;
  let call: HeraldCall;
  const sockets: InboxSocket[] = [];
  beforeAll(async () => {
    server = await startTestServer();
    call = heraldCaller(server.url, server.devKey);
  });
  afterAll(async () => {
    for (const socket of sockets) socket.close();
    await server?.close();
  });

  it('refuses the token with 401 right after the delete, closes the sockets, and a re-created subscriber does not revive it', async () => {
    const token = await inboxSession(call, server.url, 'leaving');
    const bystander = await inboxSession(call, server.url, 'staying');
    // Verified and remembered (and, embedded, the read cached) before the delete.
    expect((await inboxCount(server.url, token)).status).toBe(200);
    expect((await inboxCount(server.url, token)).status).toBe(200);
    const socket = await openInboxSocket(server.url, token);
    const otherSocket = await openInboxSocket(server.url, bystander);
    sockets.push(socket, otherSocket);
    const closed = disconnection(socket);

    const deleted = await call('DELETE', '/v2/subscribers/leaving');
    expect(deleted.status, deleted.text).toBe(200);
    const refused = await inboxCount(server.url, token);
    expect(refused.status).toBe(401);
    expectErrorBody(refused.body, 401, `/v1/inbox/notifications/count?filters=${encodeURIComponent('[{}]')}`);
    expect(await closed).toBe('io server disconnect');
    expect((await refusedHandshake(server.url, token)).data).toMatchObject({ statusCode: 401 });

    // Nobody else is touched.
    expect((await inboxCount(server.url, bystander)).status).toBe(200);
    expect(otherSocket.socket.connected).toBe(true);

    // The same subscriberId again is another subscriber: the old token stays dead, a new session works.
    expect((await call('POST', '/v2/subscribers', { subscriberId: 'leaving', firstName: 'Back' })).status).toBe(201);
    expect((await inboxCount(server.url, token)).status).toBe(401);
    const fresh = await inboxSession(call, server.url, 'leaving');
    expect((await inboxCount(server.url, fresh)).status).toBe(200);
    expect((await inboxCount(server.url, token)).status).toBe(401);
  });

  it('refuses a token of a subscriber deleted through the v1 route as well', async () => {
    const token = await inboxSession(call, server.url, 'v1-leaving');
    expect((await inboxCount(server.url, token)).status).toBe(200);
    expect((await call('DELETE', '/v1/subscribers/v1-leaving')).status).toBe(200);
    expect((await inboxCount(server.url, token)).status).toBe(401);
  });
});

const acrossProcesses = scaleoutModeRequested() && (await servicesAvailable(['PostgreSQL', 'Redis']));

describe.skipIf(!acrossProcesses)('a deleted subscriber loses their tokens (two herald api processes)', () => {
  let cluster: ScaleoutProcesses;
  const sockets: InboxSocket[] = [];
  beforeAll(async () => {
    cluster = await startScaleoutProcesses({ apis: 2, workers: 0 });
  }, 120_000);
  afterAll(async () => {
    for (const socket of sockets) socket.close();
    await cluster?.close();
  });

  it('another API process refuses the token and drops the sockets it holds as soon as the delete is answered', async () => {
    const [first, second] = cluster.apis;
    const viaFirst = heraldCaller(first!.url, SCALEOUT_SECRET);
    const token = await inboxSession(viaFirst, first!.url, 'far-away');
    // The second process verified and remembered the token, and holds the subscriber's socket.
    expect((await inboxCount(second!.url, token)).status).toBe(200);
    expect((await inboxCount(second!.url, token)).status).toBe(200);
    const socket = await openInboxSocket(second!.url, token);
    sockets.push(socket);
    const closed = disconnection(socket);

    expect((await viaFirst('DELETE', '/v2/subscribers/far-away')).status).toBe(200);
    const refused = await inboxCount(second!.url, token);
    expect(refused.status).toBe(401);
    expectErrorBody(refused.body, 401, `/v1/inbox/notifications/count?filters=${encodeURIComponent('[{}]')}`);
    expect((await inboxCount(first!.url, token)).status).toBe(401);
    expect(await closed).toBe('io server disconnect');
  });
});
