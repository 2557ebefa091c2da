import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneInvalidDeviceTokens } from '../../../src/usecases/subscriber-credentials/prune-invalid-device-tokens.js';
import { startTestServer, type TestServer } from '../../helpers/test-server.js';

describe('pruneInvalidDeviceTokens against the real store', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  async function subscriberWithTokens(subscriberId: string, deviceTokens: string[]) {
    expect((await server.request('POST', '/v2/subscribers', { body: { subscriberId } })).status).toBe(201);
    const response = await server.request('PUT', `/v1/subscribers/${subscriberId}/credentials`, { body: { providerId: 'expo', credentials: { deviceTokens } } });
    expect(response.status, response.text).toBe(200);
    return (await server.deps.store.subscribers.findBySubscriberId(server.devEnvironmentId, subscriberId))!;
  }

  it('removes the invalid tokens and saves with __v and updatedAt bumped', async () => {
    const before = await subscriberWithTokens('prune-1', ['good', 'bad-1', 'bad-2']);
    const removed = await pruneInvalidDeviceTokens(server.deps, {
      environmentId: server.devEnvironmentId, subscriberInternalId: before._id, providerId: 'expo', tokens: ['bad-1', 'bad-2', 'never-held'],
    });
    expect(removed).toEqual(['bad-1', 'bad-2']);
    const after = (await server.deps.store.subscribers.findBySubscriberId(server.devEnvironmentId, 'prune-1'))!;
    expect(after.channels[0]!.credentials.deviceTokens).toEqual(['good']);
    expect(after.__v).toBe(before.__v + 1);
    expect(after.updatedAt >= before.updatedAt).toBe(true);
  });

  it('writes nothing when no token was held, or for another environment', async () => {
    const before = await subscriberWithTokens('prune-2', ['good']);
    expect(await pruneInvalidDeviceTokens(server.deps, { environmentId: server.devEnvironmentId, subscriberInternalId: before._id, providerId: 'expo', tokens: ['other'] })).toEqual([]);
    expect(await pruneInvalidDeviceTokens(server.deps, { environmentId: server.prodEnvironmentId, subscriberInternalId: before._id, providerId: 'expo', tokens: ['good'] })).toEqual([]);
    const after = (await server.deps.store.subscribers.findBySubscriberId(server.devEnvironmentId, 'prune-2'))!;
    expect(after).toEqual(before);
  });
});
