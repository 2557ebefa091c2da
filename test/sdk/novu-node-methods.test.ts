import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Novu } from '@novu/node';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Every method of the legacy `@novu/node` 2.6.6 SDK, accounted for (the table in docs/novu-compatibility.md):
 * the served methods not exercised in the other novu-node-*.test.ts files are called here with their effect read
 * back; the methods Herald does not serve are called and answer 404; and the lists below cover all 98 methods.
 */
let server: TestServer;
let novu: Novu;

beforeAll(async () => {
  server = await startTestServer({ worker: true });
  novu = new Novu(server.devKey, { backendUrl: server.url });
});
afterAll(async () => server?.close());

async function statusOf(call: () => Promise<unknown>): Promise<number> {
  try {
    const response = (await call()) as { status: number };
    return response.status;
  } catch (error) {
    return (error as { response?: { status: number } }).response?.status ?? -1;
  }
}

const SERVED_ELSEWHERE = {
  subscribers: [
    'list', 'get', 'identify', 'bulkCreate', 'update', 'delete', 'getNotificationsFeed', 'getUnseenCount', 'markMessageSeen',
    'markMessageRead', 'markMessageAs', 'markAllMessagesAs',
  ],
  topics: ['create', 'addSubscribers', 'getSubscriber', 'checkSubscriber', 'removeSubscribers', 'list', 'delete', 'get', 'rename'],
  messages: ['list', 'deleteByTransactionId'],
};
/** Served by the subscriber-preferences routes (test/sdk/novu-node-preferences.test.ts). */
const PREFERENCES = ['getPreference', 'getGlobalPreference', 'getPreferenceByLevel', 'updatePreference', 'updateGlobalPreference'];
const SERVED_HERE = {
  subscribers: ['setCredentials', 'unsetCredentials', 'deleteCredentials', 'updateOnlineStatus', 'markMessageActionSeen'],
  integrations: ['getAll', 'getActive', 'create', 'update', 'setIntegrationAsPrimary', 'delete'],
  events: ['trigger', 'bulkTrigger', 'broadcast', 'cancel'],
  messages: ['deleteById'],
  environments: ['getCurrent', 'getAll'],
};

/** Methods Herald does not serve, each with a call that reaches Herald. */
const NOT_SERVED: Record<string, Record<string, (n: Novu) => Promise<unknown>>> = {
  changes: { get: (n) => n.changes.get({ page: 0, limit: 10, promoted: 'false' } as never), getCount: (n) => n.changes.getCount(), applyOne: (n) => n.changes.applyOne('x'), applyMany: (n) => n.changes.applyMany(['x']) },
  environments: {
    create: (n) => n.environments.create({ name: 'x' } as never),
    updateOne: (n) => n.environments.updateOne('x', {} as never),
    getApiKeys: (n) => n.environments.getApiKeys(),
    regenerateApiKeys: (n) => n.environments.regenerateApiKeys(),
  },
  executionDetails: { get: (n) => n.executionDetails.get({ notificationId: 'x', subscriberId: 'y' }) },
  feeds: { create: (n) => n.feeds.create('x'), get: (n) => n.feeds.get(), delete: (n) => n.feeds.delete('x') },
  inboundParse: { getMxStatus: (n) => n.inboundParse.getMxStatus() },
  integrations: { getInAppStatus: (n) => n.integrations.getInAppStatus(), getWebhookProviderStatus: (n) => n.integrations.getWebhookProviderStatus('sendgrid') },
  layouts: {
    create: (n) => n.layouts.create({ name: 'x', content: 'x' } as never),
    list: (n) => n.layouts.list(),
    get: (n) => n.layouts.get('x'),
    delete: (n) => n.layouts.delete('x'),
    update: (n) => n.layouts.update('x', { name: 'y' } as never),
    setDefault: (n) => n.layouts.setDefault('x'),
  },
  notificationGroups: {
    create: (n) => n.notificationGroups.create('x'),
    get: (n) => n.notificationGroups.get(),
    getOne: (n) => n.notificationGroups.getOne('x'),
    update: (n) => n.notificationGroups.update('x', { name: 'y' }),
    delete: (n) => n.notificationGroups.delete('x'),
  },
  notificationTemplates: {
    getAll: (n) => n.notificationTemplates.getAll(),
    create: (n) => n.notificationTemplates.create({ name: 'x' } as never),
    update: (n) => n.notificationTemplates.update('x', { name: 'y' } as never),
    delete: (n) => n.notificationTemplates.delete('x'),
    getOne: (n) => n.notificationTemplates.getOne('x'),
    updateStatus: (n) => n.notificationTemplates.updateStatus('x', true),
  },
  organizations: {
    list: (n) => n.organizations.list(),
    create: (n) => n.organizations.create({ name: 'x' } as never),
    rename: (n) => n.organizations.rename({ name: 'x' } as never),
    getCurrent: (n) => n.organizations.getCurrent(),
    removeMember: (n) => n.organizations.removeMember('x'),
    updateMemberRole: (n) => n.organizations.updateMemberRole('x', { role: 'admin' } as never),
    getMembers: (n) => n.organizations.getMembers(),
    updateBranding: (n) => n.organizations.updateBranding({} as never),
  },
  tenants: {
    create: (n) => n.tenants.create('x', { name: 'x' }),
    update: (n) => n.tenants.update('x', {}),
    list: (n) => n.tenants.list({}),
    delete: (n) => n.tenants.delete('x'),
    get: (n) => n.tenants.get('x'),
  },
  workflowOverrides: {
    updateOneById: (n) => n.workflowOverrides.updateOneById('x', {} as never),
    create: (n) => n.workflowOverrides.create({} as never),
    getOneById: (n) => n.workflowOverrides.getOneById('x'),
    list: (n) => n.workflowOverrides.list(),
    getOneByTenantIdandWorkflowId: (n) => n.workflowOverrides.getOneByTenantIdandWorkflowId('w', 't'),
    updateOneByTenantIdandWorkflowId: (n) => n.workflowOverrides.updateOneByTenantIdandWorkflowId('w', 't', {} as never),
    delete: (n) => n.workflowOverrides.delete('x'),
  },
};

describe('@novu/node: every method accounted for', () => {
  it('the lists cover every method of the SDK (98)', () => {
    const sdk = novu as unknown as Record<string, object>;
    const actual: string[] = [];
    for (const [area, instance] of Object.entries(sdk)) {
      if (area === 'http' || typeof instance !== 'object' || instance === null || !('http' in instance)) continue;
      const names = Object.getOwnPropertyNames(Object.getPrototypeOf(instance)).filter((name) => name !== 'constructor');
      actual.push(...names.map((name) => `${area}.${name}`));
    }
    const listed = [
      ...Object.entries(SERVED_ELSEWHERE).flatMap(([area, names]) => names.map((name) => `${area}.${name}`)),
      ...PREFERENCES.map((name) => `subscribers.${name}`),
      ...Object.entries(SERVED_HERE).flatMap(([area, names]) => names.map((name) => `${area}.${name}`)),
      ...Object.entries(NOT_SERVED).flatMap(([area, calls]) => Object.keys(calls).map((name) => `${area}.${name}`)),
    ];
    expect(actual).toHaveLength(98);
    expect([...listed].sort()).toEqual([...actual].sort());
  });

  it('methods Herald does not serve answer 404', async () => {
    for (const [area, calls] of Object.entries(NOT_SERVED)) {
      for (const [name, call] of Object.entries(calls)) expect(await statusOf(() => call(novu)), `${area}.${name}`).toBe(404);
    }
  });

  it('subscriber credentials and online status', async () => {
    await novu.subscribers.identify('node-creds', {});
    await server.request('POST', '/v1/integrations', { body: { providerId: 'push-webhook', channel: 'push', active: true, check: false, credentials: { webhookUrl: 'https://hooks.example.com/p', secretKey: 's' } } });
    const read = async () => (await server.request('GET', '/v2/subscribers/node-creds')).body.data;

    const set = await novu.subscribers.setCredentials('node-creds', 'push-webhook', { deviceTokens: ['a', 'b'] });
    expect(set.status).toBe(200);
    expect((await read()).channels).toEqual([expect.objectContaining({ providerId: 'push-webhook', credentials: { deviceTokens: ['a', 'b'] } })]);
    await novu.subscribers.unsetCredentials('node-creds', 'push-webhook');
    expect((await read()).channels[0].credentials.deviceTokens).toEqual([]);
    await novu.subscribers.setCredentials('node-creds', 'push-webhook', { deviceTokens: ['c'] });
    const deleted = await novu.subscribers.deleteCredentials('node-creds', 'push-webhook');
    expect(deleted.status).toBe(204);
    expect((await read()).channels).toEqual([]);

    const offline = await novu.subscribers.updateOnlineStatus('node-creds', false);
    expect(offline.data.data).toMatchObject({ isOnline: false, lastOnlineAt: expect.any(String) });
    expect(await read()).toMatchObject({ isOnline: false });
    await novu.subscribers.updateOnlineStatus('node-creds', true);
    expect((await read()).isOnline).toBe(true);
  });

  it('markMessageActionSeen completes or reverts an in-app button, keeping the payload', async () => {
    await server.request('POST', '/v1/integrations', { body: { providerId: 'novu', channel: 'in_app', active: true } });
    await server.request('POST', '/v2/workflows', {
      body: { workflowId: 'node-buttons', name: 'Buttons', active: true, steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'pay?', primaryAction: { label: 'Pay' } } }] },
    });
    await novu.subscribers.identify('node-clicker', {});
    await novu.trigger('node-buttons', { to: { subscriberId: 'node-clicker' }, payload: {} });
    const read = async () => (await server.request('GET', '/v1/messages?subscriberId=node-clicker&channel=in_app')).body.data[0];
    const deadline = Date.now() + 10_000;
    while (!(await read()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const message = await read();
    expect(message.cta.action).toMatchObject({ status: 'pending' });

    const done = await novu.subscribers.markMessageActionSeen('node-clicker', message._id, 'primary' as never, { status: 'done', payload: { amount: 5 } } as never);
    expect(done.status).toBe(201);
    expect(done.data.data.cta.action).toMatchObject({ status: 'done', result: { type: 'primary', payload: { amount: 5 } } });
    expect((await read()).cta.action).toMatchObject({ status: 'done', result: { type: 'primary', payload: { amount: 5 } } });
    await novu.subscribers.markMessageActionSeen('node-clicker', message._id, 'primary' as never, { status: 'pending' } as never);
    expect((await read()).cta.action.status).toBe('pending');
    // No secondary button, another subscriber, an unknown message: refused, nothing changed.
    expect(await statusOf(() => novu.subscribers.markMessageActionSeen('node-clicker', message._id, 'secondary' as never, { status: 'done' } as never))).toBe(400);
    await novu.subscribers.identify('node-stranger', {});
    expect(await statusOf(() => novu.subscribers.markMessageActionSeen('node-stranger', message._id, 'primary' as never, { status: 'done' } as never))).toBe(404);
    expect(await statusOf(() => novu.subscribers.markMessageActionSeen('node-clicker', '0123456789abcdef01234567', 'primary' as never, { status: 'done' } as never))).toBe(404);
    expect(await statusOf(() => novu.subscribers.markMessageActionSeen('node-clicker', message._id, 'primary' as never, { status: 'clicked' } as never))).toBe(400);
    expect((await read()).cta.action.status).toBe('pending');
  });

  it('environments: the current one and the organization\'s', async () => {
    const current = await novu.environments.getCurrent();
    expect(current.data.data).toMatchObject({ _id: server.devEnvironmentId, name: 'development' });
    const all = await novu.environments.getAll();
    expect(all.data.data.map((environment: { _id: string }) => environment._id).sort()).toEqual([server.devEnvironmentId, server.prodEnvironmentId].sort());
  });

  it('integrations', async () => {
    const created = await novu.integrations.create('postmark', { channel: 'email', credentials: { apiKey: 'pm', from: 'a@b.io' }, active: true, check: false } as never);
    expect(created.status).toBe(201);
    const id = created.data.data._id;
    expect((await novu.integrations.getAll()).data.data.map((i: { _id: string }) => i._id)).toContain(id);
    expect((await novu.integrations.getActive()).data.data.map((i: { _id: string }) => i._id)).toContain(id);
    const updated = await novu.integrations.update(id, { name: 'Postmark main', check: false } as never);
    expect(updated.data.data.name).toBe('Postmark main');
    expect((await novu.integrations.setIntegrationAsPrimary(id)).data.data.primary).toBe(true);
    const remaining = await novu.integrations.delete(id);
    expect(remaining.data.data.map((i: { _id: string }) => i._id)).not.toContain(id);
    expect((await server.request('GET', '/v1/integrations')).body.data.map((i: { _id: string }) => i._id)).not.toContain(id);
  });

  it('events and messages.deleteById', async () => {
    await server.request('POST', '/v1/integrations', { body: { providerId: 'novu', channel: 'in_app', active: true } });
    await server.request('POST', '/v2/workflows', {
      body: { workflowId: 'node-events', name: 'Events', active: true, steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'hi' } }] },
    });
    await server.request('POST', '/v2/workflows', {
      body: {
        workflowId: 'node-later',
        name: 'Later',
        active: true,
        steps: [{ name: 'wait', type: 'delay', controlValues: { type: 'regular', amount: 1, unit: 'hours' } }, { name: 'inbox', type: 'in_app', controlValues: { body: 'later' } }],
      },
    });
    for (const id of ['node-ev-1', 'node-ev-2']) await novu.subscribers.identify(id, {});
    const count = async (query: string) => (await server.request('GET', `/v1/messages?${query}`)).body.totalCount;

    const triggered = await novu.trigger('node-events', { to: { subscriberId: 'node-ev-1' }, payload: {}, transactionId: 'node-ev-tx' });
    expect(triggered.status).toBe(201);
    expect(triggered.data.data).toMatchObject({ acknowledged: true, transactionId: 'node-ev-tx' });
    const bulk = await novu.bulkTrigger([
      { name: 'node-events', to: { subscriberId: 'node-ev-2' }, payload: {}, transactionId: 'node-ev-bulk' },
    ] as never);
    expect(bulk.status).toBe(201);
    const broadcast = await novu.broadcast('node-events', { payload: {}, transactionId: 'node-ev-all' } as never);
    expect(broadcast.status).toBe(201);
    await server.waitForIdle();
    for (const deadline = Date.now() + 10_000; (await count('transactionId=node-ev-all')) < 2; ) {
      if (Date.now() > deadline) throw new Error('broadcast did not arrive');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(await count('transactionId=node-ev-tx')).toBe(1);
    expect(await count('transactionId=node-ev-bulk')).toBe(1);

    await novu.trigger('node-later', { to: { subscriberId: 'node-ev-1' }, payload: {}, transactionId: 'node-ev-later' });
    await server.waitForIdle({ ignoreDelayed: true });
    const cancelled = await novu.events.cancel('node-ev-later');
    expect(cancelled.data).toEqual({ data: true });
    const events = (await server.request('GET', '/v1/notifications?transactionId=node-ev-later')).body.data;
    expect(events[0].jobs.map((job: { status: string }) => job.status)).toEqual(['canceled', 'canceled']);

    const [message] = (await server.request('GET', '/v1/messages?transactionId=node-ev-tx')).body.data;
    const deleted = await novu.messages.deleteById(message._id);
    expect(deleted.data).toEqual({ data: { acknowledged: true, status: 'deleted' } });
    expect(await count('transactionId=node-ev-tx')).toBe(0);
  });
});
