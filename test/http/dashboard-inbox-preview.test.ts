import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { expectErrorBody } from '../helpers/shape.js';
import { asDashboard, createDashboardUser, signIn, type DashboardSignIn } from '../helpers/dashboard.js';
import { newId } from '../../src/domain/ids.js';

// Every dashboard user and sign-in costs a scrypt hash (about a second on the loaded 2-core test machine).
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

/**
 * GET /v1/dashboard/subscribers/:subscriberId/inbox-preview through real HTTP: the settings of the dashboard's live
 * <Inbox /> preview (application identifier of the selected environment, and the subscriber's HMAC when the
 * environment asks for one), admins only, scoped to the selected environment.
 */
describe('dashboard Inbox preview settings', () => {
  let server: TestServer;
  let admin: DashboardSignIn;
  let viewer: DashboardSignIn;
  let outsider: DashboardSignIn;
  let devIdentifier: string;
  let prodIdentifier: string;
  const path = (subscriberId: string) => `/v1/dashboard/subscribers/${encodeURIComponent(subscriberId)}/inbox-preview`;
  const hmacOf = (key: string, subscriberId: string) => createHmac('sha256', key).update(subscriberId, 'utf8').digest('hex');

  beforeAll(async () => {
    server = await startTestServer();
    await createDashboardUser(server, { email: 'root@example.com', role: 'admin' });
    await createDashboardUser(server, { email: 'reader@example.com', role: 'viewer' });
    const otherOrganizationId = newId();
    await server.deps.store.tenancy.createOrganization({ _id: otherOrganizationId, name: 'Other', createdAt: new Date().toISOString() });
    await createDashboardUser(server, { email: 'outsider@example.com', role: 'admin', organizationId: otherOrganizationId });
    [admin, viewer, outsider] = await Promise.all(['root@example.com', 'reader@example.com', 'outsider@example.com'].map((email) => signIn(server, email)));
    devIdentifier = (await server.request('GET', '/v1/environments/me')).body.data.identifier;
    prodIdentifier = (await server.request('GET', '/v1/environments/me', { key: server.prodKey })).body.data.identifier;
    expect(devIdentifier).not.toBe(prodIdentifier);
    for (const subscriberId of ['ada', 'ada/with space']) {
      expect((await server.request('POST', '/v2/subscribers', { body: { subscriberId, firstName: 'Ada' } })).status).toBe(201);
    }
    expect((await server.request('POST', '/v2/subscribers', { key: server.prodKey, body: { subscriberId: 'prod-only' } })).status).toBe(201);
  });
  afterAll(async () => server?.close());

  it("gives an admin the selected environment's identifier and no hash while HMAC is off", async () => {
    const answer = await asDashboard(server, admin, 'GET', path('ada'));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ data: { applicationIdentifier: devIdentifier, subscriberId: 'ada' } });
    // A subscriberId that needs encoding in the path.
    const encoded = await asDashboard(server, admin, 'GET', path('ada/with space'));
    expect(encoded.status).toBe(200);
    expect(encoded.body.data.subscriberId).toBe('ada/with space');
  });

  it("follows Novu-Environment-Id: production's identifier for production's subscriber", async () => {
    const answer = await asDashboard(server, admin, 'GET', path('prod-only'), { environmentId: server.prodEnvironmentId });
    expect(answer.status).toBe(200);
    expect(answer.body.data).toEqual({ applicationIdentifier: prodIdentifier, subscriberId: 'prod-only' });
  });

  it('refuses a subscriber of another environment, an unknown one and another organization with 404', async () => {
    const other = await asDashboard(server, admin, 'GET', path('prod-only'));
    expect(other.status).toBe(404);
    expectErrorBody(other.body, 404, path('prod-only'));
    expect(other.body.message).toBe('Subscriber: prod-only was not found');
    expect(JSON.stringify(other.body)).not.toContain(prodIdentifier);
    const unknown = await asDashboard(server, admin, 'GET', path('nobody'));
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe('Subscriber: nobody was not found');
    // The dev subscriber from another organization's admin: their own environment has no such subscriber.
    const outside = await asDashboard(server, outsider, 'GET', path('ada'));
    expect(outside.status).toBe(404);
    const outsideNamed = await asDashboard(server, outsider, 'GET', path('ada'), { environmentId: server.devEnvironmentId });
    expect(outsideNamed.status).toBe(404);
    expect(JSON.stringify(outsideNamed.body)).not.toContain(devIdentifier);
  });

  it('refuses viewers with 403, API keys with 403 and a request without a session with 401', async () => {
    const byViewer = await asDashboard(server, viewer, 'GET', path('ada'));
    expect(byViewer.status).toBe(403);
    expectErrorBody(byViewer.body, 403, path('ada'));
    expect(byViewer.body).toMatchObject({ error: 'Forbidden', message: 'Only admins can do this' });
    const withKey = await server.request('GET', path('ada'));
    expect(withKey.status).toBe(403);
    expect(withKey.body.message).toBe('This route needs a dashboard sign-in');
    const anonymous = await server.request('GET', path('ada'), { key: null });
    expect(anonymous.status).toBe(401);
    expectErrorBody(anonymous.body, 401, path('ada'));
    const expired = await server.request('GET', path('ada'), { key: null, headers: { cookie: 'herald_session=not-a-session' } });
    expect(expired.status).toBe(401);
  });

  it('adds the subscriber hash when the in-app integration has credentials.hmac, which opens an Inbox session', async () => {
    const integration = await server.request('POST', '/v1/integrations', {
      body: { providerId: 'novu', channel: 'in_app', name: 'Inbox', credentials: { hmac: true }, active: true },
    });
    expect(integration.status).toBe(201);
    const answer = await asDashboard(server, admin, 'GET', path('ada'));
    expect(answer.status).toBe(200);
    // An independent computation with the environment's only secret key.
    expect(answer.body.data).toEqual({ applicationIdentifier: devIdentifier, subscriberId: 'ada', subscriberHash: hmacOf(server.devKey, 'ada') });
    expect(answer.text).not.toContain(server.devKey);
    // The hash is the one POST /v1/inbox/session checks.
    const session = await server.request('POST', '/v1/inbox/session', {
      key: null,
      body: { applicationIdentifier: answer.body.data.applicationIdentifier, subscriber: { subscriberId: 'ada' }, subscriberHash: answer.body.data.subscriberHash },
    });
    expect(session.status).toBe(201);
    expect(session.body.data.token).toEqual(expect.any(String));
    // Production has no HMAC integration: still no hash there.
    const prod = await asDashboard(server, admin, 'GET', path('prod-only'), { environmentId: server.prodEnvironmentId });
    expect(prod.body.data.subscriberHash).toBeUndefined();
  });

  it('signs with the newest unrevoked key, and is a 422 once no key can sign', async () => {
    const created = await asDashboard(server, admin, 'POST', '/v1/dashboard/api-keys');
    expect(created.status).toBe(201);
    const newest: string = created.body.data.secretKey;
    const signed = await asDashboard(server, admin, 'GET', path('ada'));
    expect(signed.body.data.subscriberHash).toBe(hmacOf(newest, 'ada'));

    // Revoke every key of the environment through the dashboard: nothing is left to sign with.
    const keys = await asDashboard(server, admin, 'GET', '/v1/dashboard/api-keys');
    for (const key of keys.body.data.filter((entry: any) => !entry.revokedAt)) {
      expect((await asDashboard(server, admin, 'DELETE', `/v1/dashboard/api-keys/${key._id}`)).status).toBe(200);
    }
    const unsigned = await asDashboard(server, admin, 'GET', path('ada'));
    expect(unsigned.status).toBe(422);
    expectErrorBody(unsigned.body, 422, path('ada'));
    expect(unsigned.body.message).toMatch(/no secret key that can sign/);
  });
});
