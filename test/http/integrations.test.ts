import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_IDS } from '../../src/domain/provider-catalogue.js';
import { DELIVERY_CHANNELS, INTEGRATION_KINDS, type Integration } from '../../src/domain/types.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { expectErrorBody, expectIsoTimestamp, expectRecordId } from '../helpers/shape.js';
import { startSmtpFake, type SmtpFake } from '../fakes/smtp-fake.js';

/** Every field the API may return for an integration (the spec's table plus timestamps). */
const INTEGRATION_FIELDS = [
  '_id', '_environmentId', '_organizationId', 'name', 'identifier', 'providerId', 'channel', 'kind', 'credentials',
  'configurations', 'active', 'deleted', 'deletedAt', 'deletedBy', 'primary', 'conditions', 'createdAt', 'updatedAt',
];

function expectIntegrationShape(body: any, options: { environmentId: string; withCredentials: boolean }): void {
  for (const key of Object.keys(body)) expect(INTEGRATION_FIELDS).toContain(key);
  expectRecordId(body._id);
  expect(body._environmentId).toBe(options.environmentId);
  expectRecordId(body._organizationId);
  expect(typeof body.name).toBe('string');
  expect(typeof body.identifier).toBe('string');
  expect(PROVIDER_IDS).toContain(body.providerId);
  expect(INTEGRATION_KINDS).toContain(body.kind);
  if (body.kind === 'agent') expect(body).not.toHaveProperty('channel');
  else expect(DELIVERY_CHANNELS).toContain(body.channel);
  expect(typeof body.active).toBe('boolean');
  expect(typeof body.deleted).toBe('boolean');
  expect(typeof body.primary).toBe('boolean');
  expect(typeof body.configurations).toBe('object');
  expect(Array.isArray(body.conditions)).toBe(true);
  expectIsoTimestamp(body.createdAt);
  expectIsoTimestamp(body.updatedAt);
  if (body.deleted) {
    expectIsoTimestamp(body.deletedAt);
    expect(typeof body.deletedBy).toBe('string');
  }
  if (options.withCredentials) expect(typeof body.credentials).toBe('object');
  else expect(body).not.toHaveProperty('credentials');
}

const CONDITION = {
  isNegated: false,
  type: 'TEXT',
  value: 'AND',
  children: [{ field: 'plan', value: 'pro', operator: 'EQUAL', on: 'payload' }],
};

describe('integrations over HTTP', () => {
  let server: TestServer;
  let seq = 0;
  const unique = (prefix: string) => `${prefix}-${++seq}`;

  let smtp: SmtpFake;

  beforeAll(async () => {
    smtp = await startSmtpFake({ auth: { user: 'herald', password: 'smtp-PLAIN-pw' } });
    // The SMTP fake listens on 127.0.0.1, which the outbound guard refuses unless allowed.
    server = await startTestServer({ env: { HERALD_OUTBOUND_ALLOW: '127.0.0.1' } });
  });
  afterAll(async () => {
    await server.close();
    await smtp.close();
  });

  /** `check: false` keeps these tests off the network whatever live checks providers gain later. */
  async function createSms(overrides: Record<string, unknown> = {}, key?: string): Promise<any> {
    const response = await server.request('POST', '/v1/integrations', {
      key,
      body: { providerId: 'telnyx', channel: 'sms', credentials: { apiKey: 'telnyx-key', from: '+15550001' }, active: true, check: false, identifier: unique('telnyx'), ...overrides },
    });
    expect(response.status, response.text).toBe(201);
    return response.body.data;
  }

  describe('POST /v1/integrations', () => {
    it('creates with every field given (live SMTP check passing) and answers 201 without credentials for an API key', async () => {
      const identifier = unique('smtp-main');
      const credentials = {
        host: '127.0.0.1', port: String(smtp.port), user: 'herald', password: 'smtp-PLAIN-pw', from: 'noreply@example.com', senderName: 'Herald',
      };
      const response = await server.request('POST', '/v1/integrations', {
        body: {
          providerId: 'nodemailer',
          channel: 'email',
          kind: 'delivery',
          name: 'SMTP main',
          identifier,
          credentials,
          active: true,
          check: true,
          conditions: [CONDITION],
          configurations: { inboundWebhookEnabled: true, inboundWebhookSigningKey: 'whsec' },
          _environmentId: server.devEnvironmentId,
        },
      });
      expect(response.status, response.text).toBe(201);
      const created = response.body.data;
      expectIntegrationShape(created, { environmentId: server.devEnvironmentId, withCredentials: false });
      expect(created).toMatchObject({
        name: 'SMTP main',
        identifier,
        providerId: 'nodemailer',
        channel: 'email',
        kind: 'delivery',
        active: true,
        deleted: false,
        primary: true,
        conditions: [CONDITION],
        configurations: { inboundWebhookEnabled: true, inboundWebhookSigningKey: 'whsec' },
      });
      expect(created).not.toHaveProperty('deletedAt');
      expect(created).not.toHaveProperty('priority');
      expect(created.createdAt).toBe(created.updatedAt);
      expect(response.text).not.toContain('smtp-PLAIN-pw');

      const stored = await server.deps.store.integrations.get(server.devEnvironmentId, created._id);
      expect(stored).toMatchObject({ identifier, active: true, primary: true, deleted: false, credentials });
    });

    it('applies the defaults: name = providerId, identifier = providerId-<6>, inactive, not primary, empty conditions', async () => {
      const response = await server.request('POST', '/v1/integrations', { body: { providerId: 'mailersend' } });
      expect(response.status, response.text).toBe(201);
      const created = response.body.data;
      expectIntegrationShape(created, { environmentId: server.devEnvironmentId, withCredentials: false });
      expect(created.name).toBe('mailersend');
      expect(created.identifier).toMatch(/^mailersend-[a-z0-9]{6}$/);
      expect(created).toMatchObject({ channel: 'email', kind: 'delivery', active: false, primary: false, conditions: [], configurations: {} });
      const stored = await server.deps.store.integrations.get(server.devEnvironmentId, created._id);
      expect(stored).toMatchObject({ active: false, credentials: {}, deleted: false });
    });

    it('returns credentials to a Bearer (session) caller, with port kept a string', async () => {
      const response = await server.request('POST', '/v1/integrations', {
        bearer: server.devSession,
        body: { providerId: 'kannel', credentials: { host: 'sms.local', port: 13013, from: 'HERALD' }, active: true, check: false, identifier: unique('kannel') },
      });
      expect(response.status, response.text).toBe(201);
      expectIntegrationShape(response.body.data, { environmentId: server.devEnvironmentId, withCredentials: true });
      expect(response.body.data.credentials).toEqual({ host: 'sms.local', port: '13013', from: 'HERALD' });
    });

    it('creates an agent integration without a channel', async () => {
      const response = await server.request('POST', '/v1/integrations', {
        body: { providerId: 'pagerduty', kind: 'agent', credentials: { apiKey: 'pd' }, active: true, check: false, identifier: unique('pd') },
      });
      expect(response.status, response.text).toBe(201);
      expectIntegrationShape(response.body.data, { environmentId: server.devEnvironmentId, withCredentials: false });
      expect(response.body.data).toMatchObject({ kind: 'agent', primary: false });
      expect(response.body.data).not.toHaveProperty('channel');
      const stored = await server.deps.store.integrations.get(server.devEnvironmentId, response.body.data._id);
      expect(stored?.channel).toBeUndefined();
    });

    it('makes only the first active integration of a channel primary, with rising priority', async () => {
      const first = await createSms({ providerId: 'sms77', channel: 'sms' });
      const env = server.devEnvironmentId;
      const smsBefore = (await server.deps.store.integrations.list(env, { channel: 'sms' })).filter((i) => i.primary);
      const second = await createSms({ providerId: 'termii' });
      const storedFirst = await server.deps.store.integrations.get(env, first._id);
      const storedSecond = await server.deps.store.integrations.get(env, second._id);
      expect(second.primary).toBe(false);
      expect(storedSecond!.priority).toBeGreaterThan(storedFirst!.priority);
      const smsAfter = (await server.deps.store.integrations.list(env, { channel: 'sms' })).filter((i) => i.primary);
      expect(smsAfter.map((i) => i._id)).toEqual(smsBefore.map((i) => i._id));
      expect(smsAfter).toHaveLength(1);
    });

    it('409 on a duplicate identifier in the same environment; the same identifier is fine in another environment', async () => {
      const identifier = unique('dup');
      await createSms({ identifier });
      const again = await server.request('POST', '/v1/integrations', { body: { providerId: 'telnyx', identifier } });
      expect(again.status).toBe(409);
      expectErrorBody(again.body, 409, '/v1/integrations');
      expect(again.body.message).toContain(identifier);
      const found = (await server.deps.store.integrations.list(server.devEnvironmentId)).filter((i) => i.identifier === identifier);
      expect(found).toHaveLength(1);

      const prod = await server.request('POST', '/v1/integrations', { key: server.prodKey, body: { providerId: 'telnyx', identifier } });
      expect(prod.status).toBe(201);
      expect(prod.body.data._environmentId).toBe(server.prodEnvironmentId);
    });

    it('400 naming each missing required credential when active', async () => {
      const identifier = unique('sg');
      const response = await server.request('POST', '/v1/integrations', {
        body: { providerId: 'sendgrid', active: true, credentials: { senderName: 'x' }, identifier },
      });
      expect(response.status).toBe(400);
      expectErrorBody(response.body, 400, '/v1/integrations');
      expect(response.body.message).toEqual([
        'credentials.apiKey is required for provider sendgrid',
        'credentials.from is required for provider sendgrid',
      ]);
      expect(await server.deps.store.integrations.findByIdentifier(server.devEnvironmentId, identifier)).toBeUndefined();
    });

    it('400 for an unknown providerId, naming the value', async () => {
      const response = await server.request('POST', '/v1/integrations', { body: { providerId: 'carrier-pigeon' } });
      expect(response.status).toBe(400);
      expectErrorBody(response.body, 400);
      expect(response.body.message.join(' ')).toContain('carrier-pigeon');
    });

    it('400 when the channel does not match the catalogue', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ providerId: 'twilio', channel: 'email' }, 'channel email does not match provider twilio (sms)'],
        [{ providerId: 'clickatell' }, 'channel is required for provider clickatell (email or sms)'],
        [{ providerId: 'anthropic', channel: 'chat' }, 'channel must be absent for agent provider anthropic'],
        [{ providerId: 'slack', kind: 'agent' }, 'kind agent requires an agent provider; slack is a delivery provider'],
        [{ providerId: 'opsgenie', kind: 'delivery' }, 'kind must be agent for agent provider opsgenie'],
      ];
      for (const [body, message] of cases) {
        const response = await server.request('POST', '/v1/integrations', { body });
        expect(response.status, JSON.stringify(body)).toBe(400);
        expect(response.body.message).toContain(message);
      }
      const clickatell = await server.request('POST', '/v1/integrations', { body: { providerId: 'clickatell', channel: 'sms' } });
      expect(clickatell.status).toBe(201);
      expect(clickatell.body.data.channel).toBe('sms');
    });

    it('400 for wrong types and unknown enum values, naming the field', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ providerId: 'telnyx', active: 'yes' }, 'active must be boolean'],
        [{ providerId: 'telnyx', channel: 'fax' }, 'channel must be one of the following values: in_app, email, sms, chat, push'],
        [{ providerId: 'telnyx', kind: 'robot' }, 'kind must be one of the following values: delivery, agent'],
        [{ providerId: 'telnyx', credentials: 'secret' }, 'credentials must be object'],
        [{ providerId: 'telnyx', credentials: { secure: 'maybe' } }, 'credentials.secure must be boolean'],
        [{ providerId: 'telnyx', name: {} }, 'name must be string'],
        [{ providerId: 'telnyx', name: '' }, 'name must NOT have fewer than 1 characters'],
        [{ providerId: 'telnyx', conditions: [{ ...CONDITION, type: 'COLOUR' }] }, 'conditions.0.type must be one of the following values: BOOLEAN, TEXT, DATE, NUMBER, STATEMENT, LIST, MULTI_LIST, GROUP'],
        [{ providerId: 'telnyx', conditions: [{ ...CONDITION, value: 'XOR' }] }, 'conditions.0.value must be one of the following values: AND, OR'],
        [{ providerId: 'telnyx', conditions: [{ ...CONDITION, children: [{ ...CONDITION.children[0], operator: 'ABOUT' }] }] }, 'conditions.0.children.0.operator must be one of the following values: LARGER, SMALLER, LARGER_EQUAL, SMALLER_EQUAL, EQUAL, NOT_EQUAL, ALL_IN, ANY_IN, NOT_IN, BETWEEN, NOT_BETWEEN, LIKE, NOT_LIKE, IN'],
        [{ providerId: 'telnyx', conditions: [{ ...CONDITION, children: [{ ...CONDITION.children[0], on: 'tenant' }] }] }, 'conditions.0.children.0.on must be one of the following values: subscriber, payload'],
        [{ providerId: 'telnyx', conditions: [{ type: 'TEXT', value: 'AND', children: [] }] }, 'conditions.0.isNegated is required'],
        [{ providerId: 'telnyx', configurations: { inboundWebhookEnabled: 'sometimes' } }, 'configurations.inboundWebhookEnabled must be boolean'],
        [{ channel: 'sms' }, 'providerId is required'],
        [{ providerId: 'telnyx', _environmentId: 'aaaaaaaaaaaaaaaaaaaaaaaa' }, '_environmentId must be the environment of the caller'],
      ];
      const before = (await server.deps.store.integrations.list(server.devEnvironmentId)).length;
      for (const [body, message] of cases) {
        const response = await server.request('POST', '/v1/integrations', { body });
        expect(response.status, JSON.stringify(body)).toBe(400);
        expectErrorBody(response.body, 400, '/v1/integrations');
        expect(response.body.message, JSON.stringify(body)).toContain(message);
      }
      expect(await server.deps.store.integrations.list(server.devEnvironmentId)).toHaveLength(before);
    });

    it('400 for malformed JSON, 415 for a non-JSON content type, 401 without a key', async () => {
      const malformed = await server.request('POST', '/v1/integrations', { rawBody: '{bad', headers: { 'content-type': 'application/json' } });
      expect(malformed.status).toBe(400);
      expectErrorBody(malformed.body, 400, '/v1/integrations');
      const textBody = await server.request('POST', '/v1/integrations', { rawBody: 'providerId=telnyx', headers: { 'content-type': 'text/plain' } });
      expect(textBody.status).toBe(415);
      expectErrorBody(textBody.body, 415, '/v1/integrations');
      const anonymous = await server.request('POST', '/v1/integrations', { key: null, body: { providerId: 'telnyx' } });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.message).toBe('Missing authorization header');
    });

    it('stores no plaintext credential value anywhere in the database', async () => {
      const secret = `PLAINTEXT-SECRET-${Date.now()}-c7d1`;
      const password = `PLAINTEXT-PASSWORD-${Date.now()}-9e2a`;
      await createSms({ providerId: 'bandwidth', credentials: { user: 'u', password, accountSid: secret, from: '+1' } });
      if (server.config.databaseUrl) {
        // PostgreSQL: every column of every integration row, as text.
        const rows = await (server.deps.store as any).db.selectFrom('integrations').selectAll().execute();
        const text = JSON.stringify(rows);
        expect(text).toContain('bandwidth');
        expect(text).not.toContain(secret);
        expect(text).not.toContain(password);
        return;
      }
      const files = ['herald.sqlite', 'herald.sqlite-wal'].map((name) => join(server.dataDir, name)).filter(existsSync);
      expect(files.length).toBeGreaterThan(0);
      const bytes = Buffer.concat(files.map((file) => readFileSync(file)));
      expect(bytes.includes(Buffer.from('bandwidth'))).toBe(true);
      expect(bytes.includes(Buffer.from(secret))).toBe(false);
      expect(bytes.includes(Buffer.from(password))).toBe(false);
    });
  });

  describe('GET /v1/integrations and /v1/integrations/active', () => {
    it('lists every live integration of the caller environment only, oldest first', async () => {
      const active = await createSms();
      const inactive = await createSms({ active: false, credentials: {} });
      const prod = await createSms({ identifier: unique('prod-only') }, server.prodKey);

      const response = await server.request('GET', '/v1/integrations');
      expect(response.status).toBe(200);
      const ids = response.body.data.map((i: any) => i._id);
      expect(ids).toContain(active._id);
      expect(ids).toContain(inactive._id);
      expect(ids).not.toContain(prod._id);
      for (const item of response.body.data) expectIntegrationShape(item, { environmentId: server.devEnvironmentId, withCredentials: false });
      const stored = await server.deps.store.integrations.list(server.devEnvironmentId);
      expect(ids).toEqual(stored.map((i) => i._id));
      const createdAts = response.body.data.map((i: any) => i.createdAt);
      expect([...createdAts].sort()).toEqual(createdAts);

      const activeList = await server.request('GET', '/v1/integrations/active');
      expect(activeList.status).toBe(200);
      const activeIds = activeList.body.data.map((i: any) => i._id);
      expect(activeIds).toContain(active._id);
      expect(activeIds).not.toContain(inactive._id);
      expect(activeIds).not.toContain(prod._id);
      for (const item of activeList.body.data) {
        expectIntegrationShape(item, { environmentId: server.devEnvironmentId, withCredentials: false });
        expect(item.active).toBe(true);
      }
    });

    it('includes credentials only for a Bearer caller', async () => {
      const created = await createSms({ credentials: { apiKey: 'visible-to-session', from: '+1' } });
      for (const path of ['/v1/integrations', '/v1/integrations/active']) {
        const session = await server.request('GET', path, { bearer: server.devSession });
        expect(session.status).toBe(200);
        const mine = session.body.data.find((i: any) => i._id === created._id);
        expectIntegrationShape(mine, { environmentId: server.devEnvironmentId, withCredentials: true });
        expect(mine.credentials).toEqual({ apiKey: 'visible-to-session', from: '+1' });
        const apiKey = await server.request('GET', path);
        for (const item of apiKey.body.data) expect(item).not.toHaveProperty('credentials');
        expect(apiKey.text).not.toContain('visible-to-session');
      }
    });
  });

  describe('PUT /v1/integrations/:integrationId', () => {
    it('merges: absent fields unchanged, given ones replaced, credentials replaced as a whole', async () => {
      const created = await createSms({ conditions: [CONDITION], configurations: { inboundWebhookEnabled: false } });
      const renamed = unique('renamed');
      const response = await server.request('PUT', `/v1/integrations/${created._id}`, {
        bearer: server.devSession,
        body: { name: 'Renamed', identifier: renamed, credentials: { apiKey: 'new-key', from: '+1999' }, conditions: [], check: false },
      });
      expect(response.status, response.text).toBe(200);
      const updated = response.body.data;
      expectIntegrationShape(updated, { environmentId: server.devEnvironmentId, withCredentials: true });
      expect(updated).toMatchObject({
        _id: created._id,
        name: 'Renamed',
        identifier: renamed,
        providerId: 'telnyx',
        channel: 'sms',
        active: true,
        primary: created.primary,
        conditions: [],
        configurations: { inboundWebhookEnabled: false },
        credentials: { apiKey: 'new-key', from: '+1999' },
        createdAt: created.createdAt,
      });
      expect(updated.updatedAt >= created.updatedAt).toBe(true);

      const stored = await server.deps.store.integrations.get(server.devEnvironmentId, created._id);
      expect(stored).toMatchObject({ name: 'Renamed', identifier: renamed, credentials: { apiKey: 'new-key', from: '+1999' }, conditions: [] });
      const listed = (await server.request('GET', '/v1/integrations')).body.data.find((i: any) => i._id === created._id);
      expect(listed).toMatchObject({ name: 'Renamed', identifier: renamed });
      expect(listed).not.toHaveProperty('credentials');
    });

    it('answers without credentials for an API-key caller', async () => {
      const created = await createSms();
      const response = await server.request('PUT', `/v1/integrations/${created._id}`, { body: { name: 'Only name', check: false } });
      expect(response.status).toBe(200);
      expectIntegrationShape(response.body.data, { environmentId: server.devEnvironmentId, withCredentials: false });
      expect(response.body.data.name).toBe('Only name');
    });

    it('active: true validates the credentials (400 naming each missing one) and changes nothing', async () => {
      const created = await createSms({ active: false, credentials: {} });
      const response = await server.request('PUT', `/v1/integrations/${created._id}`, { body: { active: true } });
      expect(response.status).toBe(400);
      expectErrorBody(response.body, 400, `/v1/integrations/${created._id}`);
      expect(response.body.message).toEqual([
        'credentials.apiKey is required for provider telnyx',
        'credentials.from is required for provider telnyx',
      ]);
      const stored = await server.deps.store.integrations.get(server.devEnvironmentId, created._id);
      expect(stored).toMatchObject({ active: false, primary: false, updatedAt: created.updatedAt });

      const fixed = await server.request('PUT', `/v1/integrations/${created._id}`, {
        body: { active: true, check: false, credentials: { apiKey: 'k', from: '+1' } },
      });
      expect(fixed.status, fixed.text).toBe(200);
      expect(fixed.body.data.active).toBe(true);
    });

    it('switching the primary off hands primary to the highest-priority active integration of the channel', async () => {
      const fresh = await startTestServer();
      try {
        const make = async (providerId: string) =>
          (await fresh.request('POST', '/v1/integrations', {
            body: { providerId, credentials: { apiKey: 'k', from: 'a@b.c' }, active: true, check: false },
          })).body.data;
        const first = await make('sparkpost');
        const second = await make('mailersend');
        const third = await make('plunk');
        expect([first.primary, second.primary, third.primary]).toEqual([true, false, false]);
        const off = await fresh.request('PUT', `/v1/integrations/${first._id}`, { body: { active: false } });
        expect(off.status).toBe(200);
        expect(off.body.data).toMatchObject({ active: false, primary: false });
        const list = (await fresh.request('GET', '/v1/integrations')).body.data;
        const primaries = list.filter((i: any) => i.primary).map((i: any) => i._id);
        expect(primaries).toEqual([third._id]);
      } finally {
        await fresh.close();
      }
    });

    it('409 when the new identifier belongs to another integration', async () => {
      const a = await createSms();
      const b = await createSms();
      const response = await server.request('PUT', `/v1/integrations/${b._id}`, { body: { identifier: a.identifier, check: false } });
      expect(response.status).toBe(409);
      expectErrorBody(response.body, 409);
      expect((await server.deps.store.integrations.get(server.devEnvironmentId, b._id))!.identifier).toBe(b.identifier);
    });

    it('400 on wrong types, unknown enum values, malformed JSON and another environment id; 415 on non-JSON', async () => {
      const created = await createSms();
      const path = `/v1/integrations/${created._id}`;
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ active: 'on' }, 'active must be boolean'],
        [{ check: 3 }, 'check must be boolean'],
        [{ credentials: ['x'] }, 'credentials must be object'],
        [{ conditions: [{ ...CONDITION, type: 'NOPE' }] }, 'conditions.0.type must be one of the following values: BOOLEAN, TEXT, DATE, NUMBER, STATEMENT, LIST, MULTI_LIST, GROUP'],
        [{ identifier: '' }, 'identifier must NOT have fewer than 1 characters'],
        [{ _environmentId: server.prodEnvironmentId }, '_environmentId must be the environment of the caller'],
      ];
      for (const [body, message] of cases) {
        const response = await server.request('PUT', path, { body });
        expect(response.status, JSON.stringify(body)).toBe(400);
        expectErrorBody(response.body, 400, path);
        expect(response.body.message).toContain(message);
      }
      const malformed = await server.request('PUT', path, { rawBody: '{bad', headers: { 'content-type': 'application/json' } });
      expect(malformed.status).toBe(400);
      const text = await server.request('PUT', path, { rawBody: 'name=x', headers: { 'content-type': 'text/plain' } });
      expect(text.status).toBe(415);
      const stored = await server.deps.store.integrations.get(server.devEnvironmentId, created._id);
      expect(stored).toMatchObject({ name: created.name, identifier: created.identifier, active: true, updatedAt: created.updatedAt });
    });

    it('404 for an unknown id, a malformed id and a production integration (left unchanged)', async () => {
      const prod = await createSms({ name: 'prod' }, server.prodKey);
      for (const id of ['ffffffffffffffffffffffff', 'not-an-id', prod._id]) {
        const response = await server.request('PUT', `/v1/integrations/${id}`, { body: { name: 'hijacked', active: false } });
        expect(response.status).toBe(404);
        expectErrorBody(response.body, 404);
        expect(response.body.message).toBe(`Integration with id ${id} not found`);
      }
      const stored = await server.deps.store.integrations.get(server.prodEnvironmentId, prod._id);
      expect(stored).toMatchObject({ name: 'prod', active: true, deleted: false, updatedAt: prod.updatedAt });
    });
  });

  describe('DELETE /v1/integrations/:integrationId', () => {
    it('soft-deletes, records who and when, and answers with the remaining integrations', async () => {
      const created = await createSms();
      const response = await server.request('DELETE', `/v1/integrations/${created._id}`);
      expect(response.status).toBe(200);
      expect(Array.isArray(response.body.data)).toBe(true);
      const remaining = response.body.data.map((i: any) => i._id);
      expect(remaining).not.toContain(created._id);
      for (const item of response.body.data) expectIntegrationShape(item, { environmentId: server.devEnvironmentId, withCredentials: false });
      const live = await server.deps.store.integrations.list(server.devEnvironmentId);
      expect(remaining).toEqual(live.map((i) => i._id));

      const stored = (await server.deps.store.integrations.get(server.devEnvironmentId, created._id)) as Integration;
      expect(stored.deleted).toBe(true);
      expectIsoTimestamp(stored.deletedAt);
      expect(typeof stored.deletedBy).toBe('string');
      expect(stored.deletedBy!.length).toBeGreaterThan(0);
      expect(stored.primary).toBe(false);

      const listed = (await server.request('GET', '/v1/integrations')).body.data.map((i: any) => i._id);
      expect(listed).not.toContain(created._id);
      const again = await server.request('DELETE', `/v1/integrations/${created._id}`);
      expect(again.status).toBe(404);
      const put = await server.request('PUT', `/v1/integrations/${created._id}`, { body: { name: 'zombie' } });
      expect(put.status).toBe(404);
      const primary = await server.request('POST', `/v1/integrations/${created._id}/set-primary`);
      expect(primary.status).toBe(404);
    });

    it('returns credentials in the remaining list only to a Bearer caller, and frees the identifier', async () => {
      const created = await createSms();
      const keep = await createSms({ credentials: { apiKey: 'keep-me', from: '+1' } });
      const response = await server.request('DELETE', `/v1/integrations/${created._id}`, { bearer: server.devSession });
      expect(response.status).toBe(200);
      const kept = response.body.data.find((i: any) => i._id === keep._id);
      expectIntegrationShape(kept, { environmentId: server.devEnvironmentId, withCredentials: true });
      expect(kept.credentials).toEqual({ apiKey: 'keep-me', from: '+1' });
      const stored = await server.deps.store.integrations.get(server.devEnvironmentId, created._id);
      expect(stored?.deletedBy).toBeTruthy();

      const reuse = await server.request('POST', '/v1/integrations', { body: { providerId: 'telnyx', identifier: created.identifier } });
      expect(reuse.status).toBe(201);
    });

    it('deleting the primary makes the highest-priority remaining active integration primary', async () => {
      const fresh = await startTestServer();
      try {
        const make = async (providerId: string, active = true) =>
          (await fresh.request('POST', '/v1/integrations', {
            body: { providerId, credentials: { apiKey: 'k', from: '+1' }, active, check: false },
          })).body.data;
        const first = await make('termii');
        const second = await make('sendchamp');
        const third = await make('firetext');
        const inactiveLast = await make('sms77', false);
        expect(first.primary).toBe(true);
        const response = await fresh.request('DELETE', `/v1/integrations/${first._id}`);
        expect(response.status).toBe(200);
        const byId = new Map(response.body.data.map((i: any) => [i._id, i]));
        expect((byId.get(third._id) as any).primary).toBe(true);
        expect((byId.get(second._id) as any).primary).toBe(false);
        expect((byId.get(inactiveLast._id) as any).primary).toBe(false);
        const stored = await fresh.deps.store.integrations.list(fresh.devEnvironmentId, { channel: 'sms' });
        expect(stored.filter((i) => i.primary).map((i) => i._id)).toEqual([third._id]);
      } finally {
        await fresh.close();
      }
    });

    it('404 for an unknown id, a malformed id and a production integration (left unchanged)', async () => {
      const prod = await createSms({}, server.prodKey);
      for (const id of ['000000000000000000000000', 'zzz', prod._id]) {
        const response = await server.request('DELETE', `/v1/integrations/${id}`);
        expect(response.status).toBe(404);
        expectErrorBody(response.body, 404);
        expect(response.body.message).toBe(`Integration with id ${id} not found`);
      }
      const stored = await server.deps.store.integrations.get(server.prodEnvironmentId, prod._id);
      expect(stored).toMatchObject({ deleted: false, updatedAt: prod.updatedAt });
      expect(stored?.deletedAt).toBeUndefined();
    });
  });

  describe('POST /v1/integrations/:integrationId/set-primary', () => {
    it('makes the integration primary and active; the others of the channel lose primary', async () => {
      const fresh = await startTestServer();
      try {
        const make = async (providerId: string, active: boolean) =>
          (await fresh.request('POST', '/v1/integrations', {
            body: { providerId, credentials: { apiKey: 'k', from: 'x@y.z' }, active, check: false },
          })).body.data;
        const first = await make('sparkpost', true);
        const second = await make('mailersend', false);
        const push = await fresh.request('POST', '/v1/integrations', { body: { providerId: 'expo', active: true, check: false } });
        expect(push.body.data.primary).toBe(true);

        const response = await fresh.request('POST', `/v1/integrations/${second._id}/set-primary`, { bearer: fresh.devSession });
        expect(response.status).toBe(200);
        expectIntegrationShape(response.body.data, { environmentId: fresh.devEnvironmentId, withCredentials: true });
        expect(response.body.data).toMatchObject({ _id: second._id, primary: true, active: true });

        const env = fresh.devEnvironmentId;
        const storedFirst = await fresh.deps.store.integrations.get(env, first._id);
        const storedSecond = await fresh.deps.store.integrations.get(env, second._id);
        expect(storedFirst).toMatchObject({ primary: false, active: true });
        expect(storedSecond).toMatchObject({ primary: true, active: true });
        expect(storedSecond!.priority).toBeGreaterThan(storedFirst!.priority);
        expect((await fresh.deps.store.integrations.get(env, push.body.data._id))?.primary).toBe(true);

        const apiKey = await fresh.request('POST', `/v1/integrations/${first._id}/set-primary`);
        expect(apiKey.status).toBe(200);
        expect(apiKey.body.data).not.toHaveProperty('credentials');
        const listed = (await fresh.request('GET', '/v1/integrations')).body.data;
        const emailPrimaries = listed.filter((i: any) => i.channel === 'email' && i.primary).map((i: any) => i._id);
        expect(emailPrimaries).toEqual([first._id]);
      } finally {
        await fresh.close();
      }
    });

    it('400 when its credentials are incomplete or it is an agent integration; nothing changes', async () => {
      const incomplete = await createSms({ active: false, credentials: {} });
      const response = await server.request('POST', `/v1/integrations/${incomplete._id}/set-primary`);
      expect(response.status).toBe(400);
      expect(response.body.message).toContain('credentials.apiKey is required for provider telnyx');
      expect(await server.deps.store.integrations.get(server.devEnvironmentId, incomplete._id)).toMatchObject({ active: false, primary: false });

      const agent = await server.request('POST', '/v1/integrations', { body: { providerId: 'tool-webhook', identifier: unique('tool') } });
      const agentPrimary = await server.request('POST', `/v1/integrations/${agent.body.data._id}/set-primary`);
      expect(agentPrimary.status).toBe(400);
      expectErrorBody(agentPrimary.body, 400);
    });

    it('404 for an unknown id, a malformed id and a production integration (left unchanged)', async () => {
      const prod = await createSms({ active: false, credentials: { apiKey: 'k', from: '+1' } }, server.prodKey);
      for (const id of ['abcdefabcdefabcdefabcdef', 'x', prod._id]) {
        const response = await server.request('POST', `/v1/integrations/${id}/set-primary`);
        expect(response.status).toBe(404);
        expect(response.body.message).toBe(`Integration with id ${id} not found`);
      }
      expect(await server.deps.store.integrations.get(server.prodEnvironmentId, prod._id)).toMatchObject({ active: false, primary: false, updatedAt: prod.updatedAt });
    });
  });

  it('lists all six routes in the OpenAPI document', async () => {
    const response = await server.request('GET', '/openapi.json', { key: null });
    expect(response.status).toBe(200);
    const paths = response.body.paths;
    expect(Object.keys(paths['/v1/integrations'])).toEqual(expect.arrayContaining(['get', 'post']));
    expect(paths['/v1/integrations/active']).toHaveProperty('get');
    expect(Object.keys(paths['/v1/integrations/{integrationId}'])).toEqual(expect.arrayContaining(['put', 'delete']));
    expect(paths['/v1/integrations/{integrationId}/set-primary']).toHaveProperty('post');
  });
});
