import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { expectErrorBody } from '../helpers/shape.js';
import { startSmtpFake, type SmtpFake } from '../fakes/smtp-fake.js';
import { startHttpFake, type HttpFake } from '../fakes/http-fake.js';

/** The live credentials check through real providers, against local fakes on 127.0.0.1. */
describe('integration credentials check over HTTP', () => {
  let server: TestServer;
  let smtp: SmtpFake;
  let vendor: HttpFake;

  beforeAll(async () => {
    smtp = await startSmtpFake({ auth: { user: 'herald', password: 'right-password' } });
    vendor = await startHttpFake();
    server = await startTestServer({ env: { HERALD_OUTBOUND_ALLOW: '127.0.0.1' } });
  });
  afterAll(async () => {
    await server.close();
    await smtp.close();
    await vendor.close();
  });

  const smtpCredentials = (password: string) => ({
    host: '127.0.0.1', port: String(smtp.port), user: 'herald', password, from: 'noreply@example.com',
  });

  it('400 with the SMTP server reason when it rejects the login; nothing is stored', async () => {
    const response = await server.request('POST', '/v1/integrations', {
      body: { providerId: 'nodemailer', identifier: 'smtp-bad-login', credentials: smtpCredentials('wrong'), active: true },
    });
    expect(response.status).toBe(400);
    expectErrorBody(response.body, 400, '/v1/integrations');
    expect(response.body.message).toHaveLength(1);
    expect(response.body.message[0]).toMatch(/^credentials check failed for provider nodemailer: /);
    expect(response.body.message[0]).toContain('Invalid username or password');
    expect(response.text).not.toContain('wrong');
    expect(await server.deps.store.integrations.findByIdentifier(server.devEnvironmentId, 'smtp-bad-login')).toBeUndefined();
  });

  it('skips the check when check is false or the integration is inactive, and runs it when PUT activates', async () => {
    const unchecked = await server.request('POST', '/v1/integrations', {
      body: { providerId: 'nodemailer', identifier: 'smtp-unchecked', credentials: smtpCredentials('wrong'), active: true, check: false },
    });
    expect(unchecked.status, unchecked.text).toBe(201);
    expect(unchecked.body.data.active).toBe(true);

    const inactive = await server.request('POST', '/v1/integrations', {
      body: { providerId: 'nodemailer', identifier: 'smtp-inactive', credentials: smtpCredentials('wrong') },
    });
    expect(inactive.status, inactive.text).toBe(201);
    const id = inactive.body.data._id;

    const activate = await server.request('PUT', `/v1/integrations/${id}`, { body: { active: true } });
    expect(activate.status).toBe(400);
    expect(activate.body.message[0]).toContain('Invalid username or password');
    const stored = await server.deps.store.integrations.get(server.devEnvironmentId, id);
    expect(stored).toMatchObject({ active: false, updatedAt: inactive.body.data.updatedAt });

    const fixed = await server.request('PUT', `/v1/integrations/${id}`, {
      bearer: server.devSession,
      body: { active: true, credentials: smtpCredentials('right-password') },
    });
    expect(fixed.status, fixed.text).toBe(200);
    expect(fixed.body.data).toMatchObject({ active: true, credentials: smtpCredentials('right-password') });
    expect((await server.deps.store.integrations.get(server.devEnvironmentId, id))?.active).toBe(true);
  });

  it('PUT with credentials that fail the check leaves the stored credentials unchanged', async () => {
    const created = await server.request('POST', '/v1/integrations', {
      body: { providerId: 'nodemailer', identifier: 'smtp-good', credentials: smtpCredentials('right-password'), active: true },
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.data._id;
    const response = await server.request('PUT', `/v1/integrations/${id}`, { body: { credentials: smtpCredentials('stale') } });
    expect(response.status).toBe(400);
    const stored = await server.deps.store.integrations.get(server.devEnvironmentId, id);
    expect(stored?.credentials).toEqual(smtpCredentials('right-password'));
  });

  it('an HTTP vendor check: 401 from the vendor is a 400, 200 creates; the probe carries the key', async () => {
    vendor.setHandler(() => ({ status: 401, body: { errors: [{ message: 'The provided authorization grant is invalid' }] } }));
    const rejected = await server.request('POST', '/v1/integrations', {
      body: { providerId: 'sendgrid', identifier: 'sg-bad', credentials: { apiKey: 'SG.bad', from: 'a@b.c', baseUrl: vendor.url }, active: true },
    });
    expect(rejected.status).toBe(400);
    expect(rejected.body.message[0]).toMatch(/^credentials check failed for provider sendgrid: /);
    expect(vendor.requests.at(-1)?.headers.authorization).toBe('Bearer SG.bad');

    vendor.setHandler(() => ({ status: 200, body: { scopes: ['mail.send'] } }));
    const accepted = await server.request('POST', '/v1/integrations', {
      body: { providerId: 'sendgrid', identifier: 'sg-good', credentials: { apiKey: 'SG.good', from: 'a@b.c', baseUrl: vendor.url }, active: true },
    });
    expect(accepted.status, accepted.text).toBe(201);
    expect(vendor.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v3/scopes' });
    expect(vendor.requests.at(-1)?.headers.authorization).toBe('Bearer SG.good');
  });

  it('the outbound guard refuses a private check target unless allowed, as a 400', async () => {
    const guarded = await startTestServer();
    try {
      const before = vendor.requests.length;
      const response = await guarded.request('POST', '/v1/integrations', {
        body: { providerId: 'sendgrid', credentials: { apiKey: 'SG.x', from: 'a@b.c', baseUrl: vendor.url }, active: true },
      });
      expect(response.status).toBe(400);
      expect(response.body.message[0]).toMatch(/^credentials check failed for provider sendgrid: /);
      expect(vendor.requests.length).toBe(before);
      expect(await guarded.deps.store.integrations.list(guarded.devEnvironmentId)).toHaveLength(0);
    } finally {
      await guarded.close();
    }
  });
});
