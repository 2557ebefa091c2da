import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Novu } from '@novu/api';
import type { Subscriber } from '../../src/domain/types.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { expectErrorBody, expectIsoTimestamp, expectRecordId } from '../helpers/shape.js';

describe('subscriber channel credentials over HTTP', () => {
  let server: TestServer;
  let seq = 0;
  const unique = (prefix: string) => `${prefix}-${++seq}`;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  async function createSubscriber(key?: string): Promise<Subscriber> {
    const response = await server.request('POST', '/v2/subscribers', { key, body: { subscriberId: unique('sub') } });
    expect(response.status, response.text).toBe(201);
    return response.body.data;
  }

  /** `check: false` keeps integration creation off the network. */
  async function createIntegration(body: Record<string, unknown>, key?: string): Promise<{ _id: string; identifier: string }> {
    const response = await server.request('POST', '/v1/integrations', {
      key,
      body: { credentials: {}, active: true, check: false, identifier: unique(String(body.providerId)), ...body },
    });
    expect(response.status, response.text).toBe(201);
    return response.body.data;
  }

  async function stored(subscriberId: string, environmentId = server.devEnvironmentId): Promise<Subscriber> {
    const subscriber = await server.deps.store.subscribers.findBySubscriberId(environmentId, subscriberId);
    expect(subscriber).toBeDefined();
    return subscriber!;
  }

  const credentialsPath = (subscriberId: string) => `/v1/subscribers/${encodeURIComponent(subscriberId)}/credentials`;

  // Resolution without an identifier picks the provider's primary, else its highest-priority active one;
  // whichever the integrations area made primary, this names it.
  async function expectedDefault(providerId: string): Promise<{ _id: string; identifier: string }> {
    const live = await server.deps.store.integrations.list(server.devEnvironmentId, { activeOnly: true });
    const ofProvider = live.filter((integration) => integration.providerId === providerId);
    const chosen = ofProvider.find((integration) => integration.primary) ?? [...ofProvider].sort((a, b) => b.priority - a.priority)[0]!;
    return { _id: chosen._id, identifier: chosen.identifier };
  }

  describe('PUT /v1/subscribers/{subscriberId}/credentials', () => {
    it('sets the entry with the resolved integration, answers the subscriber and stores it', async () => {
      await createIntegration({ providerId: 'slack', channel: 'chat' });
      const subscriber = await createSubscriber();
      const integration = await expectedDefault('slack');
      const response = await server.request('PUT', credentialsPath(subscriber.subscriberId), {
        body: { providerId: 'slack', credentials: { webhookUrl: 'https://hooks.slack.example/T1/B1/x', channel: '#general' } },
      });
      expect(response.status, response.text).toBe(200);
      const data = response.body.data;
      expect(data.subscriberId).toBe(subscriber.subscriberId);
      expectRecordId(data._id);
      expect(data.channels).toEqual([
        {
          providerId: 'slack',
          integrationIdentifier: integration.identifier,
          credentials: { webhookUrl: 'https://hooks.slack.example/T1/B1/x', channel: '#general' },
          _integrationId: integration._id,
        },
      ]);
      expect(data.__v).toBe(subscriber.__v + 1);
      expectIsoTimestamp(data.updatedAt);
      expect(data.updatedAt >= subscriber.updatedAt).toBe(true);

      const after = await stored(subscriber.subscriberId);
      expect(after.channels).toEqual(data.channels);
      expect(after.__v).toBe(subscriber.__v + 1);
      expect(after.updatedAt).toBe(data.updatedAt);
    });

    it('replaces that provider entry (fields not given are dropped), leaving other providers alone', async () => {
      await createIntegration({ providerId: 'discord', channel: 'chat' });
      const subscriber = await createSubscriber();
      const path = credentialsPath(subscriber.subscriberId);
      expect((await server.request('PUT', path, { body: { providerId: 'discord', credentials: { webhookUrl: 'https://discord.example/a' } } })).status).toBe(200);
      expect((await server.request('PUT', path, { body: { providerId: 'expo', credentials: { deviceTokens: ['ExponentPushToken[1]'] } } })).status).toBe(200);

      const response = await server.request('PUT', path, { body: { providerId: 'discord', credentials: { channel: 'alerts' } } });
      expect(response.status, response.text).toBe(200);
      const after = await stored(subscriber.subscriberId);
      expect(after.channels).toHaveLength(2);
      expect(after.channels.find((entry) => entry.providerId === 'discord')!.credentials).toEqual({ channel: 'alerts' });
      expect(after.channels.find((entry) => entry.providerId === 'expo')!.credentials).toEqual({ deviceTokens: ['ExponentPushToken[1]'] });
      expect(after.__v).toBe(subscriber.__v + 3);
      expect(response.body.data.channels).toEqual(after.channels);
    });

    it('replaces device tokens with the given ones, de-duplicated', async () => {
      const subscriber = await createSubscriber();
      const path = credentialsPath(subscriber.subscriberId);
      await server.request('PUT', path, { body: { providerId: 'apns', credentials: { deviceTokens: ['old-1', 'old-2'] } } });
      const response = await server.request('PUT', path, { body: { providerId: 'apns', credentials: { deviceTokens: ['new-1', 'new-2', 'new-1'] } } });
      expect(response.status, response.text).toBe(200);
      const after = await stored(subscriber.subscriberId);
      expect(after.channels).toEqual([{ providerId: 'apns', credentials: { deviceTokens: ['new-1', 'new-2'] }, _integrationId: '' }]);
    });

    it("keeps an entry per integration when integrationIdentifier names one of the caller's integrations", async () => {
      const first = await createIntegration({ providerId: 'msteams', channel: 'chat' });
      const second = await createIntegration({ providerId: 'msteams', channel: 'chat' });
      const subscriber = await createSubscriber();
      const path = credentialsPath(subscriber.subscriberId);
      for (const integration of [first, second]) {
        const response = await server.request('PUT', path, {
          body: { providerId: 'msteams', integrationIdentifier: integration.identifier, credentials: { webhookUrl: `https://teams.example/${integration.identifier}` } },
        });
        expect(response.status, response.text).toBe(200);
      }
      const after = await stored(subscriber.subscriberId);
      expect(after.channels).toEqual([
        { providerId: 'msteams', integrationIdentifier: first.identifier, credentials: { webhookUrl: `https://teams.example/${first.identifier}` }, _integrationId: first._id },
        { providerId: 'msteams', integrationIdentifier: second.identifier, credentials: { webhookUrl: `https://teams.example/${second.identifier}` }, _integrationId: second._id },
      ]);
    });

    it("stores _integrationId '' when the environment has no integration of that provider", async () => {
      const subscriber = await createSubscriber();
      const response = await server.request('PUT', credentialsPath(subscriber.subscriberId), {
        body: { providerId: 'mattermost', credentials: { webhookUrl: 'http://mattermost.example/hooks/1' } },
      });
      expect(response.status, response.text).toBe(200);
      expect(response.body.data.channels).toEqual([{ providerId: 'mattermost', credentials: { webhookUrl: 'http://mattermost.example/hooks/1' }, _integrationId: '' }]);
      expect((await stored(subscriber.subscriberId)).channels).toEqual(response.body.data.channels);
    });
  });

  describe('PATCH /v1/subscribers/{subscriberId}/credentials', () => {
    it('appends device tokens without duplicates, overwrites given fields and keeps the others', async () => {
      const subscriber = await createSubscriber();
      const path = credentialsPath(subscriber.subscriberId);
      await server.request('PUT', path, { body: { providerId: 'push-webhook', credentials: { deviceTokens: ['a', 'b'], title: 'old', state: 'kept' } } });
      const response = await server.request('PATCH', path, { body: { providerId: 'push-webhook', credentials: { deviceTokens: ['b', 'c', 'c'], title: 'new' } } });
      expect(response.status, response.text).toBe(200);
      const expected = [{ providerId: 'push-webhook', credentials: { deviceTokens: ['a', 'b', 'c'], title: 'new', state: 'kept' }, _integrationId: '' }];
      expect(response.body.data.channels).toEqual(expected);
      const after = await stored(subscriber.subscriberId);
      expect(after.channels).toEqual(expected);
      expect(after.__v).toBe(subscriber.__v + 2);
    });

    it('creates the entry when the subscriber has none for the provider', async () => {
      await createIntegration({ providerId: 'one-signal', channel: 'push', credentials: { applicationId: 'app', apiKey: 'key' } });
      const integration = await expectedDefault('one-signal');
      const subscriber = await createSubscriber();
      const response = await server.request('PATCH', credentialsPath(subscriber.subscriberId), {
        body: { providerId: 'one-signal', credentials: { deviceTokens: ['player-1'] } },
      });
      expect(response.status, response.text).toBe(200);
      const after = await stored(subscriber.subscriberId);
      expect(after.channels).toEqual([
        { providerId: 'one-signal', integrationIdentifier: integration.identifier, credentials: { deviceTokens: ['player-1'] }, _integrationId: integration._id },
      ]);
    });
  });

  describe('DELETE /v1/subscribers/{subscriberId}/credentials/{providerId}', () => {
    it("answers 204 with no body and removes every entry of the provider, others kept", async () => {
      const first = await createIntegration({ providerId: 'zulip', channel: 'chat' });
      const second = await createIntegration({ providerId: 'zulip', channel: 'chat' });
      const subscriber = await createSubscriber();
      const path = credentialsPath(subscriber.subscriberId);
      for (const integration of [first, second]) {
        await server.request('PUT', path, { body: { providerId: 'zulip', integrationIdentifier: integration.identifier, credentials: { webhookUrl: 'https://zulip.example/x' } } });
      }
      await server.request('PUT', path, { body: { providerId: 'fcm', credentials: { deviceTokens: ['fcm-1'] } } });
      const before = await stored(subscriber.subscriberId);
      expect(before.channels).toHaveLength(3);

      const response = await server.request('DELETE', `${path}/zulip`);
      expect(response.status, response.text).toBe(204);
      expect(response.text).toBe('');
      const after = await stored(subscriber.subscriberId);
      expect(after.channels).toEqual([{ providerId: 'fcm', credentials: { deviceTokens: ['fcm-1'] }, _integrationId: '' }]);
      expect(after.__v).toBe(before.__v + 1);
    });

    it('answers 204 and changes nothing when the subscriber has no entry for the provider', async () => {
      const subscriber = await createSubscriber();
      const response = await server.request('DELETE', `${credentialsPath(subscriber.subscriberId)}/slack`);
      expect(response.status, response.text).toBe(204);
      const after = await stored(subscriber.subscriberId);
      expect(after.channels).toEqual([]);
      expect(after.__v).toBe(subscriber.__v);
      expect(after.updatedAt).toBe(subscriber.updatedAt);
    });

    it('answers 204 with no body again when repeated with the same Idempotency-Key', async () => {
      const subscriber = await createSubscriber();
      const path = credentialsPath(subscriber.subscriberId);
      await server.request('PUT', path, { body: { providerId: 'pushpad', credentials: { deviceTokens: ['p1'] } } });
      const headers = { 'idempotency-key': unique('delete-key') };
      const first = await server.request('DELETE', `${path}/pushpad`, { headers });
      const second = await server.request('DELETE', `${path}/pushpad`, { headers });
      for (const response of [first, second]) {
        expect(response.status, response.text).toBe(204);
        expect(response.text).toBe('');
        expect(response.headers.get('idempotency-key')).toBe(headers['idempotency-key']);
      }
      expect((await stored(subscriber.subscriberId)).channels).toEqual([]);
    });

    it('answers 400 for a provider that is not a chat or push provider', async () => {
      const subscriber = await createSubscriber();
      const response = await server.request('DELETE', `${credentialsPath(subscriber.subscriberId)}/sendgrid`);
      expect(response.status).toBe(400);
      expectErrorBody(response.body, 400);
      expect(response.body.message.join(' ')).toContain('providerId must be one of the following values');
    });
  });

  describe('bad input', () => {
    const badBodies: Array<[string, unknown, string]> = [
      ['an email provider id', { providerId: 'sendgrid', credentials: {} }, 'providerId'],
      ['an unknown provider id', { providerId: 'pigeon', credentials: {} }, 'providerId'],
      ['no providerId', { credentials: {} }, 'providerId'],
      ['no credentials', { providerId: 'slack' }, 'credentials'],
      ['a webhookUrl that is not a URL', { providerId: 'slack', credentials: { webhookUrl: 'not a url' } }, 'webhookUrl'],
      ['a webhookUrl that is not http(s)', { providerId: 'slack', credentials: { webhookUrl: 'ftp://files.example/x' } }, 'webhookUrl'],
      ['an empty device token', { providerId: 'fcm', credentials: { deviceTokens: ['ok', ''] } }, 'deviceTokens'],
      ['a blank device token', { providerId: 'fcm', credentials: { deviceTokens: ['   '] } }, 'deviceTokens'],
      ['a device token that is not a string', { providerId: 'fcm', credentials: { deviceTokens: [{ token: 'x' }] } }, 'deviceTokens'],
      ['deviceTokens as a single string', { providerId: 'fcm', credentials: { deviceTokens: 'token-1' } }, 'deviceTokens'],
      ['a numeric webhookUrl', { providerId: 'slack', credentials: { webhookUrl: 5 } }, 'webhookUrl'],
    ];

    for (const method of ['PUT', 'PATCH']) {
      for (const [label, body, field] of badBodies) {
        it(`${method} with ${label} is a 400 naming ${field}, and the subscriber is unchanged`, async () => {
          const subscriber = await createSubscriber();
          const response = await server.request(method, credentialsPath(subscriber.subscriberId), { body });
          expect(response.status, response.text).toBe(400);
          expectErrorBody(response.body, 400);
          expect([response.body.message].flat().join(' ')).toContain(field);
          const after = await stored(subscriber.subscriberId);
          expect(after.channels).toEqual([]);
          expect(after.__v).toBe(subscriber.__v);
        });
      }
    }

    it('drops credential fields outside the spec instead of storing them', async () => {
      const subscriber = await createSubscriber();
      const response = await server.request('PUT', credentialsPath(subscriber.subscriberId), {
        body: { providerId: 'slack', credentials: { webhookUrl: 'https://hooks.example/1', apiKey: 'should-not-be-kept' } },
      });
      expect(response.status, response.text).toBe(200);
      const entry = (await stored(subscriber.subscriberId)).channels.find((candidate) => candidate.providerId === 'slack')!;
      expect(entry.credentials).toEqual({ webhookUrl: 'https://hooks.example/1' });
    });

    it("answers 400 when integrationIdentifier names another provider's integration", async () => {
      const sms = await createIntegration({ providerId: 'telnyx', channel: 'sms', credentials: { apiKey: 'k', from: '+15550001' } });
      const subscriber = await createSubscriber();
      const response = await server.request('PUT', credentialsPath(subscriber.subscriberId), {
        body: { providerId: 'slack', integrationIdentifier: sms.identifier, credentials: {} },
      });
      expect(response.status, response.text).toBe(400);
      expect((await stored(subscriber.subscriberId)).channels).toEqual([]);
    });
  });

  describe('not found and environment isolation', () => {
    it('answers 404 "Subscriber: <id> was not found" for an unknown subscriber on every route', async () => {
      const path = credentialsPath('nobody-here');
      const body = { providerId: 'slack', credentials: { webhookUrl: 'https://hooks.example/1' } };
      for (const [method, url] of [['PUT', path], ['PATCH', path], ['DELETE', `${path}/slack`]] as const) {
        const response = await server.request(method, url, method === 'DELETE' ? {} : { body });
        expect(response.status, `${method} ${response.text}`).toBe(404);
        expectErrorBody(response.body, 404);
        expect(response.body.message).toBe('Subscriber: nobody-here was not found');
      }
    });

    it('answers 404 for an integrationIdentifier that does not exist, and changes nothing', async () => {
      const subscriber = await createSubscriber();
      const response = await server.request('PUT', credentialsPath(subscriber.subscriberId), {
        body: { providerId: 'slack', integrationIdentifier: 'no-such-integration', credentials: {} },
      });
      expect(response.status, response.text).toBe(404);
      expectErrorBody(response.body, 404);
      expect(response.body.message).toContain('no-such-integration');
      expect((await stored(subscriber.subscriberId)).__v).toBe(subscriber.__v);
    });

    it("answers 404 for an integrationIdentifier of another environment's integration", async () => {
      const prodIntegration = await createIntegration({ providerId: 'slack', channel: 'chat' }, server.prodKey);
      const subscriber = await createSubscriber();
      const response = await server.request('PATCH', credentialsPath(subscriber.subscriberId), {
        body: { providerId: 'slack', integrationIdentifier: prodIntegration.identifier, credentials: {} },
      });
      expect(response.status, response.text).toBe(404);
      expect((await stored(subscriber.subscriberId)).channels).toEqual([]);
    });

    it("treats another environment's subscriber as unknown on every route and leaves it unchanged", async () => {
      const prodSubscriber = await createSubscriber(server.prodKey);
      const prodPath = credentialsPath(prodSubscriber.subscriberId);
      const seeded = await server.request('PUT', prodPath, { key: server.prodKey, body: { providerId: 'expo', credentials: { deviceTokens: ['prod-token'] } } });
      expect(seeded.status, seeded.text).toBe(200);
      const before = await stored(prodSubscriber.subscriberId, server.prodEnvironmentId);

      const body = { providerId: 'expo', credentials: { deviceTokens: ['dev-token'] } };
      for (const [method, url] of [['PUT', prodPath], ['PATCH', prodPath], ['DELETE', `${prodPath}/expo`]] as const) {
        const response = await server.request(method, url, method === 'DELETE' ? {} : { body });
        expect(response.status, `${method} ${response.text}`).toBe(404);
        expect(response.body.message).toBe(`Subscriber: ${prodSubscriber.subscriberId} was not found`);
      }
      expect(await stored(prodSubscriber.subscriberId, server.prodEnvironmentId)).toEqual(before);
    });

    it('needs authentication', async () => {
      const subscriber = await createSubscriber();
      const response = await server.request('PUT', credentialsPath(subscriber.subscriberId), { key: null, body: { providerId: 'slack', credentials: {} } });
      expect(response.status).toBe(401);
    });
  });

  describe('@novu/api SDK compatibility', () => {
    it('update, append and delete through the unchanged SDK', async () => {
      const novu = new Novu({ secretKey: server.devKey, serverURL: server.url, retryConfig: { strategy: 'none' } });
      const subscriber = await createSubscriber();

      const updated = await novu.subscribers.credentials.update({ providerId: 'fcm', credentials: { deviceTokens: ['t1'] } }, subscriber.subscriberId);
      expect(updated.result.channels?.[0]).toMatchObject({ providerId: 'fcm', credentials: { deviceTokens: ['t1'] } });

      const appended = await novu.subscribers.credentials.append({ providerId: 'fcm', credentials: { deviceTokens: ['t2', 't1'] } }, subscriber.subscriberId);
      expect(appended.result.channels?.[0]?.credentials.deviceTokens).toEqual(['t1', 't2']);

      await novu.subscribers.credentials.delete(subscriber.subscriberId, 'fcm');
      expect((await stored(subscriber.subscriberId)).channels).toEqual([]);
    });
  });
});
