import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock, startTestServer, type TestServer } from '../helpers/test-server.js';
import { expectErrorBody } from '../helpers/shape.js';
import { asDashboard, cookieFrom, createDashboardUser, newSetupToken, signIn, TEST_PASSWORD } from '../helpers/dashboard.js';
import { newId } from '../../src/domain/ids.js';

// Every dashboard user and sign-in costs a scrypt hash (about a second on the loaded 2-core test machine).
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

/** Dashboard sign-in and the cookie session as a caller of every REST route, through real HTTP. */

const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

describe('dashboard setup link', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server?.close());

  it('creates the first admin once, signs them in, and then stops working', async () => {
    const before = await server.request('GET', '/v1/dashboard/setup', { key: null });
    expect(before.status).toBe(200);
    expect(before.body).toEqual({ data: { required: true } });

    const token = await newSetupToken(server);
    const missing = await server.request('POST', '/v1/dashboard/setup', { key: null, body: { token, password: 'long enough pw' } });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain('email is required');
    const short = await server.request('POST', '/v1/dashboard/setup', { key: null, body: { token, email: 'a@example.com', password: 'short' } });
    expect(short.status).toBe(400);
    expect(short.body.message.join(' ')).toMatch(/password/);
    const wrongToken = await server.request('POST', '/v1/dashboard/setup', {
      key: null,
      body: { token: 'not-the-token', email: 'first@example.com', password: TEST_PASSWORD },
    });
    expect(wrongToken.status).toBe(400);
    expect(wrongToken.body.message).toEqual(['token is invalid, expired or already used']);
    expect((await server.request('GET', '/v1/dashboard/setup', { key: null })).body.data.required).toBe(true);

    const created = await server.request('POST', '/v1/dashboard/setup', {
      key: null,
      body: { token, email: 'First@Example.com', password: TEST_PASSWORD, name: 'First Admin' },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.user).toMatchObject({ email: 'first@example.com', name: 'First Admin', role: 'admin' });
    expect(created.body.data.user.passwordHash).toBeUndefined();
    expect(typeof created.body.data.csrfToken).toBe('string');
    const setCookie = created.headers.getSetCookie().find((line) => line.startsWith('herald_session='))!;
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    expect(setCookie).toMatch(/Path=\//);
    // Served over plain HTTP: a Secure cookie would be dropped by the browser.
    expect(setCookie).not.toMatch(/Secure/i);

    const me = await asDashboard(server, { cookie: cookieFrom(created)!, csrfToken: created.body.data.csrfToken, user: created.body.data.user, setCookie }, 'GET', '/v1/dashboard/me');
    expect(me.status).toBe(200);
    expect(me.body.data.user.email).toBe('first@example.com');

    const again = await server.request('POST', '/v1/dashboard/setup', { key: null, body: { token, email: 'second@example.com', password: TEST_PASSWORD } });
    expect(again.status).toBe(409);
    expectErrorBody(again.body, 409, '/v1/dashboard/setup');
    expect((await server.request('GET', '/v1/dashboard/setup', { key: null })).body.data.required).toBe(false);
    expect(await server.deps.store.dashboard.countUsers()).toBe(1);
    await expect(newSetupToken(server)).rejects.toThrow(/already exists/);
  });

  it('refuses an expired setup token', async () => {
    const clock = new ManualClock(Date.now());
    const other = await startTestServer({ clock, env: { HERALD_DASHBOARD_SETUP_TOKEN_TTL_SECONDS: '60' } });
    try {
      const token = await newSetupToken(other);
      clock.advance(61_000);
      const response = await other.request('POST', '/v1/dashboard/setup', { key: null, body: { token, email: 'late@example.com', password: TEST_PASSWORD } });
      expect(response.status).toBe(400);
      expect(await other.deps.store.dashboard.countUsers()).toBe(0);
    } finally {
      await other.close();
    }
  });
});

describe('dashboard sign-in and sessions', () => {
  let server: TestServer;
  const adminEmail = 'admin@example.com';
  const viewerEmail = 'viewer@example.com';
  beforeAll(async () => {
    server = await startTestServer({ env: { HERALD_LOGIN_MAX_ATTEMPTS_PER_EMAIL: '4', HERALD_LOGIN_MAX_ATTEMPTS_PER_IP: '1000' } });
    await createDashboardUser(server, { email: adminEmail, role: 'admin', name: 'Ada' });
    await createDashboardUser(server, { email: viewerEmail, role: 'viewer' });
   }, 120_000);
  afterAll(async () => server?.close());

  it('signs in with the right password and answers the same 401 for a wrong password or an unknown email', async () => {
    const wrong = await server.request('POST', '/v1/dashboard/login', { key: null, body: { email: viewerEmail, password: 'wrong password' } });
    const unknown = await server.request('POST', '/v1/dashboard/login', { key: null, body: { email: 'nobody@example.com', password: 'wrong password' } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expectErrorBody(wrong.body, 401, '/v1/dashboard/login');
    expect(wrong.body.message).toBe('Invalid email or password');
    expect(unknown.body.message).toBe(wrong.body.message);
    expect(cookieFrom(wrong)).toBeUndefined();

    const session = await signIn(server, 'ADMIN@example.com');
    expect(session.user).toMatchObject({ email: adminEmail, role: 'admin', name: 'Ada' });
    expect(session.setCookie).toMatch(/HttpOnly/i);
    expect(session.setCookie).toMatch(/SameSite=Strict/i);
  });

  it('answers 400 naming the field for a malformed sign-in', async () => {
    const response = await server.request('POST', '/v1/dashboard/login', { key: null, body: { email: adminEmail } });
    expect(response.status).toBe(400);
    expect(response.body.message).toContain('password is required');
    const wrongType = await server.request('POST', '/v1/dashboard/login', { key: null, body: { email: adminEmail, password: 5 } });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.message.join(' ')).toMatch(/password must be string/);
  });

  it('rate-limits sign-in attempts per email, even with the right password', async () => {
    const email = 'limited@example.com';
    await createDashboardUser(server, { email, role: 'viewer' });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await server.request('POST', '/v1/dashboard/login', { key: null, body: { email, password: 'not it at all' } })).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401]);
    const limited = await server.request('POST', '/v1/dashboard/login', { key: null, body: { email, password: TEST_PASSWORD } });
    expect(limited.status).toBe(429);
    expectErrorBody(limited.body, 429, '/v1/dashboard/login');
    expect(limited.body.message).toBe('Too many sign-in attempts, try again later');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(cookieFrom(limited)).toBeUndefined();
    // Another email from the same client is not affected by this email's limit.
    await signIn(server, adminEmail);
  });

  it('authenticates the existing REST routes with the cookie, in the chosen environment', async () => {
    const session = await signIn(server, adminEmail);
    const subscriberId = unique('sub');
    const created = await asDashboard(server, session, 'POST', '/v2/subscribers', { body: { subscriberId } });
    expect(created.status).toBe(201);
    // Default environment: development (an API key of development sees it, production's does not).
    expect((await server.request('GET', `/v2/subscribers/${subscriberId}`)).status).toBe(200);
    expect((await server.request('GET', `/v2/subscribers/${subscriberId}`, { key: server.prodKey })).status).toBe(404);

    const inProd = await asDashboard(server, session, 'GET', `/v2/subscribers/${subscriberId}`, { environmentId: server.prodEnvironmentId });
    expect(inProd.status).toBe(404);
    const prodSubscriber = unique('prod');
    expect((await asDashboard(server, session, 'POST', '/v2/subscribers', { body: { subscriberId: prodSubscriber }, environmentId: server.prodEnvironmentId })).status).toBe(201);
    expect((await server.request('GET', `/v2/subscribers/${prodSubscriber}`, { key: server.prodKey })).status).toBe(200);

    const unknownEnvironment = await asDashboard(server, session, 'GET', '/v2/subscribers', { environmentId: newId() });
    expect(unknownEnvironment.status).toBe(404);
    expectErrorBody(unknownEnvironment.body, 404);
    const malformed = await asDashboard(server, session, 'GET', '/v1/integrations', { environmentId: 'nope' });
    expect(malformed.status).toBe(404);
  });

  it('refuses a cookie-authenticated write without the CSRF token, or with a wrong one, and changes nothing', async () => {
    const session = await signIn(server, adminEmail);
    const subscriberId = unique('csrf');
    for (const csrf of [false, 'forged-token', `${session.csrfToken}x`] as const) {
      const response = await asDashboard(server, session, 'POST', '/v2/subscribers', { body: { subscriberId }, csrf });
      expect(response.status).toBe(403);
      expectErrorBody(response.body, 403, '/v2/subscribers');
      expect(response.body.message).toBe('CSRF token missing or invalid');
    }
    expect((await server.request('GET', `/v2/subscribers/${subscriberId}`)).status).toBe(404);
    // Another session's token is not this session's.
    const other = await signIn(server, adminEmail);
    expect((await asDashboard(server, session, 'POST', '/v2/subscribers', { body: { subscriberId }, csrf: other.csrfToken })).status).toBe(403);
    // Reads need no token; the dashboard-only logout needs one too.
    expect((await asDashboard(server, session, 'GET', '/v2/subscribers')).status).toBe(200);
    expect((await asDashboard(server, session, 'POST', '/v1/dashboard/logout', { csrf: false })).status).toBe(403);
  });

  it('lets a viewer read everything but credentials and change nothing', async () => {
    const admin = await signIn(server, adminEmail);
    const viewer = await signIn(server, viewerEmail);
    const identifier = unique('sendgrid');
    const integration = await asDashboard(server, admin, 'POST', '/v1/integrations', {
      body: { providerId: 'sendgrid', channel: 'email', credentials: { apiKey: 'SG.secret-value', from: 'a@example.com' }, active: true, check: false, identifier },
    });
    expect(integration.status).toBe(201);
    expect(integration.body.data.credentials).toMatchObject({ apiKey: 'SG.secret-value' });
    const integrationId = integration.body.data._id;

    const adminList = await asDashboard(server, admin, 'GET', '/v1/integrations');
    expect(adminList.body.data.find((i: any) => i._id === integrationId).credentials.apiKey).toBe('SG.secret-value');
    const viewerList = await asDashboard(server, viewer, 'GET', '/v1/integrations');
    expect(viewerList.status).toBe(200);
    const seen = viewerList.body.data.find((i: any) => i._id === integrationId);
    expect(seen.identifier).toBe(identifier);
    expect(seen.credentials).toBeUndefined();
    expect(viewerList.text).not.toContain('SG.secret-value');

    const put = await asDashboard(server, viewer, 'PUT', `/v1/integrations/${integrationId}`, { body: { name: 'renamed by viewer' } });
    expect(put.status).toBe(403);
    expect(put.body.message).toBe('Viewers cannot make changes');
    const del = await asDashboard(server, viewer, 'DELETE', `/v1/integrations/${integrationId}`);
    expect(del.status).toBe(403);
    const stored = await server.deps.store.integrations.get(server.devEnvironmentId, integrationId);
    expect(stored).toMatchObject({ deleted: false });
    expect(stored!.name).not.toBe('renamed by viewer');
    expect((await asDashboard(server, viewer, 'POST', '/v2/subscribers', { body: { subscriberId: unique('v') } })).status).toBe(403);

    const me = await asDashboard(server, viewer, 'GET', '/v1/dashboard/me');
    expect(me.body.data.user.role).toBe('viewer');
    // Signing out is not a change to shared state: viewers may.
    expect((await asDashboard(server, viewer, 'POST', '/v1/dashboard/logout')).status).toBe(200);
  });

  it('answers /me with the user, organization, environments and the CSRF token', async () => {
    const session = await signIn(server, adminEmail);
    const me = await asDashboard(server, session, 'GET', '/v1/dashboard/me');
    expect(me.status).toBe(200);
    expect(me.body.data.user).toMatchObject({ email: adminEmail, role: 'admin' });
    expect(me.body.data.organization).toEqual({ _id: expect.any(String), name: 'Herald' });
    expect(me.body.data.environments.map((env: any) => env.name).sort()).toEqual(['development', 'production']);
    expect(me.body.data.environments.map((env: any) => env._id).sort()).toEqual([server.devEnvironmentId, server.prodEnvironmentId].sort());
    expect(me.body.data.csrfToken).toBe(session.csrfToken);
    // The Inbox application identifier of each environment.
    const development = await server.deps.store.tenancy.getEnvironment(server.devEnvironmentId);
    expect(me.body.data.environments.find((env: any) => env._id === server.devEnvironmentId).identifier).toBe((development as any).identifier);
    expect(typeof (development as any).identifier).toBe('string');

    // An API key is not a dashboard user.
    const withKey = await server.request('GET', '/v1/dashboard/me');
    expect(withKey.status).toBe(403);
    const anonymous = await server.request('GET', '/v1/dashboard/me', { key: null });
    expect(anonymous.status).toBe(401);
  });

  it('ends the session on logout: the cookie is cleared and the old value no longer works', async () => {
    const session = await signIn(server, adminEmail);
    const out = await asDashboard(server, session, 'POST', '/v1/dashboard/logout');
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ data: { acknowledged: true } });
    const cleared = out.headers.getSetCookie().find((line) => line.startsWith('herald_session='))!;
    expect(cleared).toMatch(/herald_session=;/);
    expect(cleared).toMatch(/Expires=Thu, 01 Jan 1970/);
    const after = await asDashboard(server, session, 'GET', '/v1/dashboard/me');
    expect(after.status).toBe(401);
    expect(after.body.message).toBe('Session expired or signed out');
    expect((await asDashboard(server, session, 'GET', '/v2/subscribers')).status).toBe(401);
  });

  it("never shows another organization's data", async () => {
    const createdAt = new Date().toISOString();
    const otherOrganizationId = newId();
    const otherEnvironmentId = newId();
    await server.deps.store.tenancy.createOrganization({ _id: otherOrganizationId, name: 'Other', createdAt });
    await server.deps.store.tenancy.createEnvironment({ _id: otherEnvironmentId, _organizationId: otherOrganizationId, name: 'development', createdAt } as any);
    const outsiderEmail = unique('outsider') + '@example.com';
    await createDashboardUser(server, { email: outsiderEmail, role: 'admin', organizationId: otherOrganizationId });
    const outsider = await signIn(server, outsiderEmail);

    const me = await asDashboard(server, outsider, 'GET', '/v1/dashboard/me');
    expect(me.body.data.organization).toEqual({ _id: otherOrganizationId, name: 'Other' });
    expect(me.body.data.environments.map((env: any) => env._id)).toEqual([otherEnvironmentId]);

    const subscriberId = unique('home');
    expect((await server.request('POST', '/v2/subscribers', { body: { subscriberId } })).status).toBe(201);
    // Its default environment is its own organization's: the first organization's subscriber is not there.
    expect((await asDashboard(server, outsider, 'GET', `/v2/subscribers/${subscriberId}`)).status).toBe(404);
    // Naming the first organization's environment is a 404 on everything, reads and writes.
    for (const [method, path] of [
      ['GET', `/v2/subscribers/${subscriberId}`],
      ['GET', '/v1/integrations'],
      ['GET', '/v1/notifications'],
      ['DELETE', `/v2/subscribers/${subscriberId}`],
    ] as const) {
      const response = await asDashboard(server, outsider, method, path, { environmentId: server.devEnvironmentId });
      expect(response.status, `${method} ${path}`).toBe(404);
    }
    expect((await server.request('GET', `/v2/subscribers/${subscriberId}`)).status).toBe(200);
  });
});

describe('dashboard session expiry and per-IP limit', () => {
  it('expires a session after HERALD_DASHBOARD_SESSION_TTL_SECONDS', async () => {
    const clock = new ManualClock(Date.now());
    const server = await startTestServer({ clock, env: { HERALD_DASHBOARD_SESSION_TTL_SECONDS: '120' } });
    try {
      await createDashboardUser(server, { email: 'ttl@example.com', role: 'admin' });
      const session = await signIn(server, 'ttl@example.com');
      expect(session.setCookie).toMatch(/Expires=/);
      clock.advance(119_000);
      expect((await asDashboard(server, session, 'GET', '/v1/dashboard/me')).status).toBe(200);
      clock.advance(2_000);
      expect((await asDashboard(server, session, 'GET', '/v1/dashboard/me')).status).toBe(401);
    } finally {
      await server.close();
    }
  });

  it('rate-limits sign-in attempts per client IP across emails', async () => {
    const server = await startTestServer({ env: { HERALD_LOGIN_MAX_ATTEMPTS_PER_IP: '3' } });
    try {
      await createDashboardUser(server, { email: 'ip@example.com', role: 'admin' });
      for (let i = 0; i < 3; i++) {
        const response = await server.request('POST', '/v1/dashboard/login', { key: null, body: { email: `guess${i}@example.com`, password: 'guessing' } });
        expect(response.status).toBe(401);
      }
      const limited = await server.request('POST', '/v1/dashboard/login', { key: null, body: { email: 'ip@example.com', password: TEST_PASSWORD } });
      expect(limited.status).toBe(429);
    } finally {
      await server.close();
    }
  });
});
