import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFake, type HttpFake } from '../../fakes/http-fake.js';
import { startTestServer, type TestServer } from '../../helpers/test-server.js';
import { createWorkflow } from '../engine-helpers.js';
import {
  createIntegration,
  createSubscriber,
  deliveryEnv,
  getSubscriber,
  outcomeDetails,
  setChannelCredentials,
  triggerAndSettle,
} from './delivery-helpers.js';

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const UNREGISTERED = {
  error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND', details: [{ errorCode: 'UNREGISTERED' }] },
};

let server: TestServer;
let fcm: HttpFake;
let expo: HttpFake;

beforeAll(async () => {
  fcm = await startHttpFake((request) => {
    if (request.path === '/token') return { body: { access_token: 'ya29.push', expires_in: 3600 } };
    const { token } = JSON.parse(request.body).message;
    return String(token).startsWith('dead') ? { status: 404, body: UNREGISTERED } : { body: { name: `projects/p/messages/${token}` } };
  });
  expo = await startHttpFake((request) => ({
    body: {
      data: (JSON.parse(request.body) as Array<{ to: string }>).map(() => ({
        status: 'error',
        message: 'not a registered push notification recipient',
        details: { error: 'DeviceNotRegistered' },
      })),
    },
  }));
  server = await startTestServer({ worker: true, env: deliveryEnv() });
  await createWorkflow(server, { workflowId: 'buzz', steps: [{ name: 'buzz', type: 'push', controlValues: { subject: 'Hi {{ subscriber.firstName }}', body: 'Order {{ payload.orderId }}' } }] });
  await createIntegration(server, {
    providerId: 'fcm',
    identifier: 'fcm-main',
    credentials: {
      baseUrl: fcm.url,
      serviceAccount: JSON.stringify({ project_id: 'p', private_key: rsa, client_email: `push-${fcm.port}@p.iam.gserviceaccount.com`, token_uri: `${fcm.url}/token` }),
    },
  });
  await createIntegration(server, { providerId: 'expo', identifier: 'expo-main', credentials: { baseUrl: expo.url } });
});
afterAll(async () => {
  await server?.close();
  await fcm?.close();
  await expo?.close();
});

const channelEntry = (subscriber: any, providerId: string) => subscriber.channels.find((entry: any) => entry.providerId === providerId);

describe('push per-token results', () => {
  it('some tokens failed: message warning, the invalid token removed from the subscriber, a Warning detail', async () => {
    await createSubscriber(server, { subscriberId: 'pat', firstName: 'Pat' });
    await setChannelCredentials(server, 'pat', { providerId: 'fcm', credentials: { deviceTokens: ['live-1', 'dead-1'] } });
    const delivery = await triggerAndSettle(server, { name: 'buzz', to: 'pat', payload: { orderId: 'o-7' }, overrides: { integrationIdentifier: 'fcm-main' } });

    expect(delivery.messages).toHaveLength(1);
    expect(delivery.messages[0]).toMatchObject({
      status: 'warning',
      providerId: 'fcm',
      title: 'Hi Pat',
      content: 'Order o-7',
      deviceTokens: ['live-1', 'dead-1'],
      errorId: 'push_tokens_partially_failed',
    });
    expect(delivery.messages[0].errorText).toMatch(/^1 of 2 device tokens failed: dead-1: FCM answered 404/);
    expect(delivery.job.status).toBe('completed');
    const [detail] = outcomeDetails(delivery.job);
    expect(detail).toMatchObject({ status: 'Warning', providerId: 'fcm' });
    expect(detail.detail).toMatch(/^Message sent via fcm to 1 of 2 device tokens; .*invalid tokens removed from the subscriber: dead-1$/);
    expect(JSON.parse(detail.raw).tokenResults).toEqual([
      { token: 'live-1', ok: true },
      expect.objectContaining({ token: 'dead-1', ok: false, invalid: true }),
    ]);

    const subscriber = await getSubscriber(server, 'pat');
    expect(channelEntry(subscriber, 'fcm').credentials.deviceTokens).toEqual(['live-1']);
  });

  it('every token failed: message error, all invalid tokens removed, a Failed detail', async () => {
    await createSubscriber(server, { subscriberId: 'quinn', firstName: 'Quinn' });
    await setChannelCredentials(server, 'quinn', { providerId: 'expo', credentials: { deviceTokens: ['ExponentPushToken[x]', 'ExponentPushToken[y]'] } });
    await setChannelCredentials(server, 'quinn', { providerId: 'fcm', credentials: { deviceTokens: ['ExponentPushToken[x]'] } });
    const delivery = await triggerAndSettle(server, { name: 'buzz', to: 'quinn', payload: { orderId: 'o-8' }, overrides: { push: { integrationIdentifier: 'expo-main' } } });

    expect(expo.requests).toHaveLength(1);
    expect(delivery.messages).toHaveLength(1);
    expect(delivery.messages[0]).toMatchObject({
      status: 'error',
      providerId: 'expo',
      title: 'Hi Quinn',
      content: 'Order o-8',
      errorId: 'push_tokens_failed',
    });
    expect(delivery.messages[0].errorText).toMatch(/^All 2 device tokens failed: ExponentPushToken\[x\]: Expo: DeviceNotRegistered/);
    expect(delivery.messages[0].deliveredAt).toBeUndefined();
    expect(delivery.job.status).toBe('failed');
    const [detail] = outcomeDetails(delivery.job);
    expect(detail).toMatchObject({ status: 'Failed', providerId: 'expo', raw: expect.stringContaining('DeviceNotRegistered') });

    const subscriber = await getSubscriber(server, 'quinn');
    expect(channelEntry(subscriber, 'expo').credentials.deviceTokens).toEqual([]);
    // Validity is per vendor: the same string held for FCM stays.
    expect(channelEntry(subscriber, 'fcm').credentials.deviceTokens).toEqual(['ExponentPushToken[x]']);
  });
});
