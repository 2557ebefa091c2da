import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { expectErrorBody } from '../helpers/shape.js';
import { asDashboard, cookieFrom, createDashboardUser, signIn, TEST_PASSWORD, type DashboardSignIn } from '../helpers/dashboard.js';
import { newId } from '../../src/domain/ids.js';

// Every dashboard user and sign-in costs a scrypt hash (about a second on the loaded 2-core test machine).
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

/** Users, invites, secret keys, the audit log and the provider catalogue, through real HTTP. */

/** Each user and sign-in costs a scrypt hash: slow on a loaded 2-core machine. */
const SETUP_MS = 120_000;

const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

describe('dashboard administration', () => {
  let server: TestServer;
  let admin: DashboardSignIn;
  let viewer: DashboardSignIn;
  let outsider: DashboardSignIn;
  let otherEnvironmentId: string;

  beforeAll(async () => {
    server = await startTestServer();
    await createDashboardUser(server, { email: 'root@example.com', role: 'admin' });
    await createDashboardUser(server, { email: 'reader@example.com', role: 'viewer' });
    const createdAt = new Date().toISOString();
    const otherOrganizationId = newId();
    otherEnvironmentId = newId();
    await server.deps.store.tenancy.createOrganization({ _id: otherOrganizationId, name: 'Other', createdAt });
    await server.deps.store.tenancy.createEnvironment({ _id: otherEnvironmentId, _organizationId: otherOrganizationId, name: 'development', createdAt } as any);
    await createDashboardUser(server, { email: 'outsider@example.com', role: 'admin', organizationId: otherOrganizationId });
    admin = await signIn(server, 'root@example.com');
    viewer = await signIn(server, 'reader@example.com');
    outsider = await signIn(server, 'outsider@example.com');
   }, SETUP_MS);
  afterAll(async () => server?.close());

  describe('invites', () => {
    it('creates an invite link that signs a new user in with its role, once', async () => {
      const created = await asDashboard(server, admin, 'POST', '/v1/dashboard/invites', { body: { role: 'viewer' } });
      expect(created.status).toBe(201);
      expect(created.body.data).toMatchObject({ _id: expect.any(String), role: 'viewer', expiresAt: expect.any(String) });
      expect(created.body.data.url).toMatch(/^\/dashboard\/invite\?token=[A-Za-z0-9_-]{43}$/);
      const token = new URLSearchParams(created.body.data.url.split('?')[1]).get('token');

      const listed = await asDashboard(server, admin, 'GET', '/v1/dashboard/invites');
      const entry = listed.body.data.find((invite: any) => invite._id === created.body.data._id);
      expect(entry).toMatchObject({ role: 'viewer', expired: false, createdBy: admin.user._id });
      expect(JSON.stringify(listed.body)).not.toContain(token);

      const accepted = await server.request('POST', '/v1/dashboard/invites/accept', { key: null, body: { token, email: 'newbie@example.com', password: TEST_PASSWORD, name: 'Newbie' } });
      expect(accepted.status).toBe(201);
      expect(accepted.body.data.user).toMatchObject({ email: 'newbie@example.com', role: 'viewer', name: 'Newbie' });
      expect(cookieFrom(accepted)).toBeDefined();
      const me = await server.request('GET', '/v1/dashboard/me', { key: null, headers: { cookie: cookieFrom(accepted)! } });
      expect(me.body.data.organization.name).toBe('Herald');

      const again = await server.request('POST', '/v1/dashboard/invites/accept', { key: null, body: { token, email: 'second@example.com', password: TEST_PASSWORD } });
      expect(again.status).toBe(400);
      expect(again.body.message).toEqual(['token is invalid, expired or already used']);
      expect((await asDashboard(server, admin, 'GET', '/v1/dashboard/invites')).body.data.some((invite: any) => invite._id === created.body.data._id)).toBe(false);
    });

    it('keeps an email-bound invite for that address, and usable after a refused attempt', async () => {
      const created = await asDashboard(server, admin, 'POST', '/v1/dashboard/invites', { body: { role: 'admin', email: 'Bound@Example.com' } });
      expect(created.body.data.email).toBe('bound@example.com');
      const token = new URLSearchParams(created.body.data.url.split('?')[1]).get('token');
      const wrong = await server.request('POST', '/v1/dashboard/invites/accept', { key: null, body: { token, email: 'other@example.com', password: TEST_PASSWORD } });
      expect(wrong.status).toBe(400);
      expect(wrong.body.message).toEqual(['email must be the address the invite was made for']);
      const taken = await server.request('POST', '/v1/dashboard/invites/accept', { key: null, body: { token, email: 'bound@example.com', password: 'short' } });
      expect(taken.status).toBe(400);
      const right = await server.request('POST', '/v1/dashboard/invites/accept', { key: null, body: { token, email: 'bound@example.com', password: TEST_PASSWORD } });
      expect(right.status).toBe(201);
      expect(right.body.data.user.role).toBe('admin');
    });

    it('deletes an invite: its link stops working; bad input, viewers and other organizations are refused', async () => {
      const created = await asDashboard(server, admin, 'POST', '/v1/dashboard/invites', { body: { role: 'viewer' } });
      const token = new URLSearchParams(created.body.data.url.split('?')[1]).get('token');
      expect((await asDashboard(server, outsider, 'DELETE', `/v1/dashboard/invites/${created.body.data._id}`)).status).toBe(404);
      expect((await asDashboard(server, viewer, 'DELETE', `/v1/dashboard/invites/${created.body.data._id}`)).status).toBe(403);
      const deleted = await asDashboard(server, admin, 'DELETE', `/v1/dashboard/invites/${created.body.data._id}`);
      expect(deleted.status).toBe(200);
      expect(deleted.body).toEqual({ data: { acknowledged: true, status: 'deleted' } });
      const accept = await server.request('POST', '/v1/dashboard/invites/accept', { key: null, body: { token, email: 'late@example.com', password: TEST_PASSWORD } });
      expect(accept.status).toBe(400);
      expect((await asDashboard(server, admin, 'DELETE', `/v1/dashboard/invites/${created.body.data._id}`)).status).toBe(404);
      expect((await asDashboard(server, admin, 'DELETE', '/v1/dashboard/invites/not-an-id')).status).toBe(404);

      const badRole = await asDashboard(server, admin, 'POST', '/v1/dashboard/invites', { body: { role: 'owner' } });
      expect(badRole.status).toBe(400);
      expect(badRole.body.message).toContain('role must be one of the following values: admin, viewer');
      const badEmail = await asDashboard(server, admin, 'POST', '/v1/dashboard/invites', { body: { role: 'viewer', email: 'not an email' } });
      expect(badEmail.status).toBe(400);
      expect(badEmail.body.message).toEqual(['email must be an email address']);
      const byViewer = await asDashboard(server, viewer, 'POST', '/v1/dashboard/invites', { body: { role: 'admin' } });
      expect(byViewer.status).toBe(403);
      expect((await asDashboard(server, viewer, 'GET', '/v1/dashboard/invites')).status).toBe(403);
      expect((await asDashboard(server, admin, 'POST', '/v1/dashboard/invites', { body: { role: 'viewer' }, csrf: false })).status).toBe(403);
      const withKey = await server.request('POST', '/v1/dashboard/invites', { body: { role: 'admin' } });
      expect(withKey.status).toBe(403);
      expect(withKey.body.message).toBe('This route needs a dashboard sign-in');
    });
  });

  describe('users', () => {
    it('lists, renames and changes roles; never leaves the organization without an admin', async () => {
      const email = unique('member') + '@example.com';
      const member = await createDashboardUser(server, { email, role: 'viewer' });
      const list = await asDashboard(server, viewer, 'GET', '/v1/dashboard/users');
      expect(list.status).toBe(200);
      expect(list.body.data.map((user: any) => user.email)).toEqual(expect.arrayContaining(['root@example.com', 'reader@example.com', email]));
      expect(list.body.data.map((user: any) => user.email)).not.toContain('outsider@example.com');
      expect(list.text).not.toMatch(/scrypt|passwordHash/);

      const promoted = await asDashboard(server, admin, 'PATCH', `/v1/dashboard/users/${member._id}`, { body: { role: 'admin', name: 'Member' } });
      expect(promoted.status).toBe(200);
      expect(promoted.body.data).toMatchObject({ role: 'admin', name: 'Member' });
      const memberSession = await signIn(server, email);
      expect((await asDashboard(server, memberSession, 'POST', '/v1/dashboard/invites', { body: { role: 'viewer' } })).status).toBe(201);
      // A role change applies to sessions already open.
      expect((await asDashboard(server, admin, 'PATCH', `/v1/dashboard/users/${member._id}`, { body: { role: 'viewer', name: null } })).body.data.name).toBeUndefined();
      expect((await asDashboard(server, memberSession, 'POST', '/v1/dashboard/invites', { body: { role: 'viewer' } })).status).toBe(403);

      expect((await asDashboard(server, viewer, 'PATCH', `/v1/dashboard/users/${member._id}`, { body: { role: 'admin' } })).status).toBe(403);
      const badRole = await asDashboard(server, admin, 'PATCH', `/v1/dashboard/users/${member._id}`, { body: { role: 'root' } });
      expect(badRole.status).toBe(400);
      expect((await asDashboard(server, admin, 'PATCH', `/v1/dashboard/users/${newId()}`, { body: { role: 'admin' } })).status).toBe(404);
      expect((await asDashboard(server, outsider, 'PATCH', `/v1/dashboard/users/${member._id}`, { body: { role: 'admin' } })).status).toBe(404);
    });

    it('deletes a user and ends their sessions; the last admin can be neither deleted nor demoted', async () => {
      const email = unique('leaver') + '@example.com';
      const leaver = await createDashboardUser(server, { email, role: 'viewer' });
      const session = await signIn(server, email);
      expect((await asDashboard(server, viewer, 'DELETE', `/v1/dashboard/users/${leaver._id}`)).status).toBe(403);
      expect((await asDashboard(server, outsider, 'DELETE', `/v1/dashboard/users/${leaver._id}`)).status).toBe(404);
      const deleted = await asDashboard(server, admin, 'DELETE', `/v1/dashboard/users/${leaver._id}`);
      expect(deleted.status).toBe(200);
      expect((await asDashboard(server, session, 'GET', '/v1/dashboard/me')).status).toBe(401);

      // The other organization has exactly one admin.
      const outsiderId = outsider.user._id;
      const demote = await asDashboard(server, outsider, 'PATCH', `/v1/dashboard/users/${outsiderId}`, { body: { role: 'viewer' } });
      expect(demote.status).toBe(409);
      expectErrorBody(demote.body, 409);
      expect(demote.body.message).toBe('The last admin cannot become a viewer');
      const remove = await asDashboard(server, outsider, 'DELETE', `/v1/dashboard/users/${outsiderId}`);
      expect(remove.status).toBe(409);
      expect(remove.body.message).toBe('The last admin cannot be deleted');
      expect((await asDashboard(server, outsider, 'GET', '/v1/dashboard/me')).body.data.user.role).toBe('admin');
    });
  });

  describe('secret keys', () => {
    it('creates a key shown once, lists keys masked, and a revoked key gets 401 at once', async () => {
      const created = await asDashboard(server, admin, 'POST', '/v1/dashboard/api-keys');
      expect(created.status).toBe(201);
      const { _id: keyId, secretKey } = created.body.data;
      expect(secretKey).toMatch(/^[0-9a-f]{64}$/);
      expect((await server.request('GET', '/v1/integrations', { key: secretKey })).status).toBe(200);
      expect((await server.request('GET', '/v1/integrations', { key: secretKey })).status).toBe(200);

      const listed = await asDashboard(server, viewer, 'GET', '/v1/dashboard/api-keys');
      expect(listed.status).toBe(200);
      const entry = listed.body.data.find((key: any) => key._id === keyId);
      expect(entry).toMatchObject({ last4: secretKey.slice(-4), maskedKey: `••••••••${secretKey.slice(-4)}`, createdBy: admin.user._id });
      expect(entry.revokedAt).toBeUndefined();
      expect(listed.text).not.toContain(secretKey);
      // Keys made elsewhere (bootstrap, CLI) keep their last four too (issue #25), and never their whole value.
      expect(listed.text).not.toContain(server.devKey);
      const bootstrap = listed.body.data.find((key: any) => key.last4 === server.devKey.slice(-4));
      expect(bootstrap).toMatchObject({ maskedKey: `••••••••${server.devKey.slice(-4)}` });

      expect((await asDashboard(server, viewer, 'POST', '/v1/dashboard/api-keys')).status).toBe(403);
      expect((await asDashboard(server, viewer, 'DELETE', `/v1/dashboard/api-keys/${keyId}`)).status).toBe(403);
      expect((await server.request('GET', '/v1/dashboard/api-keys')).status).toBe(403);
      // Another environment's key is unknown there.
      expect((await asDashboard(server, admin, 'DELETE', `/v1/dashboard/api-keys/${keyId}`, { environmentId: server.prodEnvironmentId })).status).toBe(404);
      expect((await asDashboard(server, outsider, 'DELETE', `/v1/dashboard/api-keys/${keyId}`)).status).toBe(404);
      expect((await server.request('GET', '/v1/integrations', { key: secretKey })).status).toBe(200);

      // Usable for Inbox HMACs too, until revoked.
      expect(await server.deps.store.tenancy.listHmacKeys(server.devEnvironmentId)).toContain(secretKey);
      const revoked = await asDashboard(server, admin, 'DELETE', `/v1/dashboard/api-keys/${keyId}`);
      expect(revoked.status).toBe(200);
      expect(revoked.body).toEqual({ data: { acknowledged: true, status: 'revoked' } });
      const refused = await server.request('GET', '/v1/integrations', { key: secretKey });
      expect(refused.status).toBe(401);
      expect(refused.body.message).toBe('API Key not found');
      expect((await asDashboard(server, admin, 'GET', '/v1/dashboard/api-keys')).body.data.find((key: any) => key._id === keyId).revokedAt).toEqual(expect.any(String));
      expect((await asDashboard(server, admin, 'DELETE', `/v1/dashboard/api-keys/${keyId}`)).status).toBe(404);
      expect(await server.deps.store.tenancy.listHmacKeys(server.devEnvironmentId)).not.toContain(secretKey);
      // Other keys keep working.
      expect((await server.request('GET', '/v1/integrations')).status).toBe(200);
    });

    it('creates keys in the environment the dashboard has chosen', async () => {
      const created = await asDashboard(server, admin, 'POST', '/v1/dashboard/api-keys', { environmentId: server.prodEnvironmentId });
      const subscriberId = unique('prodkey');
      await server.request('POST', '/v2/subscribers', { key: server.prodKey, body: { subscriberId } });
      expect((await server.request('GET', `/v2/subscribers/${subscriberId}`, { key: created.body.data.secretKey })).status).toBe(200);
      const devList = await asDashboard(server, admin, 'GET', '/v1/dashboard/api-keys');
      expect(devList.body.data.some((key: any) => key._id === created.body.data._id)).toBe(false);
    });
  });

  describe('audit log', () => {
    it('records sign-ins, credential and key changes, and deletions with who and when; admins only; per organization', async () => {
      const failed = await server.request('POST', '/v1/dashboard/login', { key: null, body: { email: 'root@example.com', password: 'wrong password' } });
      expect(failed.status).toBe(401);
      const session = await signIn(server, 'root@example.com');

      const integration = await asDashboard(server, session, 'POST', '/v1/integrations', {
        body: { providerId: 'sendgrid', channel: 'email', credentials: { apiKey: 'SG.x', from: 'a@example.com' }, check: false, identifier: unique('audit') },
      });
      const integrationId = integration.body.data._id;
      await asDashboard(server, session, 'PUT', `/v1/integrations/${integrationId}`, { body: { credentials: { apiKey: 'SG.y', from: 'a@example.com' }, check: false } });
      await server.request('DELETE', `/v1/integrations/${integrationId}`);
      const key = await asDashboard(server, session, 'POST', '/v1/dashboard/api-keys');
      await asDashboard(server, session, 'DELETE', `/v1/dashboard/api-keys/${key.body.data._id}`);
      const subscriberId = unique('gone');
      await server.request('POST', '/v2/subscribers', { body: { subscriberId } });
      await asDashboard(server, session, 'DELETE', `/v2/subscribers/${subscriberId}`);
      const legacySubscriber = unique('legacy');
      await server.request('POST', '/v2/subscribers', { body: { subscriberId: legacySubscriber } });
      expect((await server.request('DELETE', `/v1/subscribers/${legacySubscriber}`)).status).toBe(200);
      const workflowId = unique('wf');
      expect((await server.request('POST', '/v2/workflows', { body: { workflowId, name: 'Audited', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'x' } }] } })).status).toBe(201);
      expect((await asDashboard(server, session, 'DELETE', `/v2/workflows/${workflowId}`)).status).toBe(204);
      const topicKey = unique('topic');
      expect((await server.request('POST', '/v2/topics', { body: { key: topicKey, name: 'Audited' } })).status).toBe(201);
      expect((await asDashboard(server, session, 'DELETE', `/v2/topics/${topicKey}`)).status).toBe(200);
      const user = await createDashboardUser(server, { email: unique('audited') + '@example.com', role: 'viewer' });
      await asDashboard(server, session, 'DELETE', `/v1/dashboard/users/${user._id}`);

      // Set-primary, a subscriber's channel credentials (set, merged, deleted), a workflow's updates.
      const chat = await asDashboard(server, session, 'POST', '/v1/integrations', {
        body: { providerId: 'slack', channel: 'chat', credentials: {}, active: true, check: false, identifier: unique('audit-chat') },
      });
      const chatId = chat.body.data._id;
      expect((await asDashboard(server, session, 'POST', `/v1/integrations/${chatId}/set-primary`)).status).toBe(200);
      const credentialed = unique('creds');
      await server.request('POST', '/v2/subscribers', { body: { subscriberId: credentialed } });
      const credentialsBody = { providerId: 'slack', credentials: { webhookUrl: 'https://hooks.slack.example/T1/B1/secret-hook' } };
      expect((await asDashboard(server, session, 'PUT', `/v1/subscribers/${credentialed}/credentials`, { body: credentialsBody })).status).toBe(200);
      expect((await server.request('PATCH', `/v1/subscribers/${credentialed}/credentials`, { body: credentialsBody })).status).toBe(200);
      expect((await asDashboard(server, session, 'DELETE', `/v1/subscribers/${credentialed}/credentials/slack`)).status).toBe(204);
      const editedWorkflow = unique('wf-edit');
      const createdWorkflow = await asDashboard(server, session, 'POST', '/v2/workflows', {
        body: { workflowId: editedWorkflow, name: 'Edited', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'x' } }] },
      });
      expect(createdWorkflow.status).toBe(201);
      expect((await asDashboard(server, session, 'PATCH', `/v2/workflows/${editedWorkflow}`, { body: { active: true } })).status).toBe(200);
      const replaced = await asDashboard(server, session, 'PUT', `/v2/workflows/${editedWorkflow}`, {
        body: { name: 'Edited again', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'y' } }] },
      });
      expect(replaced.status, replaced.text).toBe(200);

      const log = await asDashboard(server, admin, 'GET', '/v1/dashboard/audit-log?limit=100');
      expect(log.status).toBe(200);
      expect(log.body).toMatchObject({ page: 0, pageSize: 100, hasMore: expect.any(Boolean) });
      const entries = log.body.data as any[];
      const find = (action: string, predicate: (entry: any) => boolean = () => true) => entries.find((entry) => entry.action === action && predicate(entry));
      const userActor = { kind: 'user', id: session.user._id, label: 'root@example.com' };
      expect(find('auth.login', (e) => e.outcome === 'failure')).toMatchObject({ actor: { kind: 'anonymous', label: 'root@example.com' }, ip: '127.0.0.1' });
      expect(find('auth.login', (e) => e.outcome === 'success' && e.actor.id === session.user._id)).toMatchObject({ target: { type: 'user', id: session.user._id } });
      expect(find('integration.created', (e) => e.target?.id === integrationId)).toMatchObject({ actor: userActor, _environmentId: server.devEnvironmentId });
      expect(find('integration.updated', (e) => e.target?.id === integrationId)).toMatchObject({ actor: userActor, outcome: 'success' });
      expect(find('integration.deleted', (e) => e.target?.id === integrationId)).toMatchObject({ actor: { kind: 'apiKey', id: expect.any(String) } });
      expect(find('api_key.created', (e) => e.target?.id === key.body.data._id)).toMatchObject({ actor: userActor });
      expect(find('api_key.revoked', (e) => e.target?.id === key.body.data._id)).toMatchObject({ actor: userActor });
      expect(find('subscriber.deleted', (e) => e.target?.id === subscriberId)).toMatchObject({ actor: userActor });
      expect(find('user.deleted', (e) => e.target?.id === user._id)).toMatchObject({ actor: userActor });
      expect(find('subscriber.deleted', (e) => e.target?.id === legacySubscriber)).toMatchObject({ actor: { kind: 'apiKey' } });
      expect(find('workflow.deleted', (e) => e.target?.id === workflowId)).toMatchObject({ actor: userActor });
      expect(find('topic.deleted', (e) => e.target?.id === topicKey)).toMatchObject({ actor: userActor });
      expect(find('integration.primary_set', (e) => e.target?.id === chatId)).toMatchObject({ actor: userActor, outcome: 'success', _environmentId: server.devEnvironmentId });
      expect(find('subscriber.credentials_set', (e) => e.target?.id === credentialed)).toMatchObject({ actor: userActor, target: { type: 'subscriber' } });
      expect(find('subscriber.credentials_updated', (e) => e.target?.id === credentialed)).toMatchObject({ actor: { kind: 'apiKey' } });
      expect(find('subscriber.credentials_deleted', (e) => e.target?.id === `${credentialed}/slack`)).toMatchObject({ actor: userActor, target: { type: 'subscriber_credentials' } });
      expect(find('workflow.created', (e) => e.target?.id === createdWorkflow.body.data._id)).toMatchObject({ actor: userActor, target: { type: 'workflow' } });
      expect(entries.filter((e) => e.action === 'workflow.updated' && e.target?.id === editedWorkflow)).toHaveLength(2);
      expect(find('auth.login', (e) => e.outcome === 'success' && e.actor.id === session.user._id)).toBeDefined();
      for (const entry of entries) expect(Date.parse(entry.createdAt)).not.toBeNaN();
      // Newest first.
      const times = entries.map((entry) => entry.createdAt);
      expect([...times].sort().reverse()).toEqual(times);
      expect(JSON.stringify(entries)).not.toMatch(/wrong password|SG\.y|secret-hook/);

      expect((await asDashboard(server, viewer, 'GET', '/v1/dashboard/audit-log')).status).toBe(403);
      const outsiderLog = await asDashboard(server, outsider, 'GET', '/v1/dashboard/audit-log?limit=100');
      expect(outsiderLog.body.data.some((entry: any) => entry.target?.id === integrationId)).toBe(false);
      const badLimit = await asDashboard(server, admin, 'GET', '/v1/dashboard/audit-log?limit=1000');
      expect(badLimit.status).toBe(400);
      expect(badLimit.body.message).toEqual(['limit must be <= 100']);
    });
  });

  describe('provider catalogue', () => {
    it("lists each provider's channel and credential fields, and whether Herald delivers through it", async () => {
      const response = await asDashboard(server, viewer, 'GET', '/v1/dashboard/providers');
      expect(response.status).toBe(200);
      const sendgrid = response.body.data.find((p: any) => p.providerId === 'sendgrid');
      expect(sendgrid).toMatchObject({ channel: 'email', kind: 'delivery', deliverable: true });
      expect(sendgrid.credentialFields).toEqual(
        expect.arrayContaining([
          { key: 'apiKey', required: true, secret: true },
          { key: 'from', required: true, secret: false },
          { key: 'baseUrl', required: false, secret: false },
        ]),
      );
      expect(response.body.data.find((p: any) => p.providerId === 'mailjet')).toMatchObject({ channel: 'email', deliverable: false });
      expect(response.body.data.find((p: any) => p.providerId === 'novu')).toMatchObject({ channel: 'in_app', deliverable: true, credentialFields: [] });
      expect(new Set(response.body.data.map((p: any) => p.channel))).toEqual(new Set(['in_app', 'email', 'sms', 'chat', 'push', undefined]));
    });
  });

  it("scopes the dashboard to an environment of the user's own organization", async () => {
    expect((await asDashboard(server, admin, 'GET', '/v1/dashboard/api-keys', { environmentId: otherEnvironmentId })).status).toBe(404);
    expect((await asDashboard(server, outsider, 'GET', '/v1/dashboard/api-keys', { environmentId: server.devEnvironmentId })).status).toBe(404);
    const own = await asDashboard(server, outsider, 'GET', '/v1/dashboard/api-keys');
    expect(own.status).toBe(200);
    expect(own.body.data).toEqual([]);
  });

  it('documents every dashboard route in the OpenAPI document under the Dashboard tag', async () => {
    const document = (await server.request('GET', '/openapi.json', { key: null })).body;
    const operations = Object.entries<Record<string, any>>(document.paths)
      .filter(([path]) => path.startsWith('/v1/dashboard/'))
      .flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })));
    expect(operations.length).toBeGreaterThanOrEqual(16);
    for (const { path, method, operation } of operations) {
      expect(operation.tags, `${method} ${path}`).toEqual(['Dashboard']);
      expect(operation.summary, `${method} ${path}`).toEqual(expect.any(String));
    }
    const publicOps = operations.filter(({ operation }) => Array.isArray(operation.security) && operation.security.length === 0).map(({ method, path }) => `${method} ${path}`);
    expect(publicOps.sort()).toEqual(['get /v1/dashboard/setup', 'post /v1/dashboard/invites/accept', 'post /v1/dashboard/login', 'post /v1/dashboard/setup']);
    // The overview serves API keys too (issue #25: "an API route"): it keeps the document's default security.
    const apiKeysToo = ['get /v1/dashboard/overview'];
    expect(document.paths['/v1/dashboard/overview'].get.security).toBeUndefined();
    for (const { path, method, operation } of operations.filter(({ method, path }) => !publicOps.includes(`${method} ${path}`) && !apiKeysToo.includes(`${method} ${path}`))) {
      expect(operation.security, `${method} ${path}`).toEqual([{ DashboardSession: [] }]);
    }
    // The retry and preview routes serve API keys too: they keep the document's default security.
    expect(document.paths['/v1/notifications/{notificationId}/jobs/{jobId}/retry'].post.security).toBeUndefined();
    expect(document.paths['/v2/workflows/{workflowId}/step/{stepId}/preview'].post.tags).toEqual(['Dashboard']);
  });
});
