import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Subscriber preferences through real HTTP: Novu v2 (`/v2/subscribers/{id}/preferences`, `/bulk`) and v1
 * (`/v1/subscribers/{id}/preferences...`) shapes field by field, state read back, 400s naming the field, 404s
 * across environments, and read-back after the subscriber or a workflow is deleted.
 */
let server: TestServer;
const ids: Record<string, string> = {};

const inApp = { name: 'inbox', type: 'in_app', controlValues: { body: 'Hi' } };
const email = { name: 'mail', type: 'email', controlValues: { subject: 'Hi', body: 'Hello' } };
const sms = { name: 'text', type: 'sms', controlValues: { body: 'Hi' } };

async function workflow(body: Record<string, unknown>): Promise<void> {
  const response = await server.request('POST', '/v2/workflows', { body: { name: String(body.workflowId), active: true, ...body } });
  expect(response.status, response.text).toBe(201);
  ids[String(body.workflowId)] = response.body.data._id;
}

async function subscriber(subscriberId: string, key?: string): Promise<void> {
  const response = await server.request('POST', '/v2/subscribers', { body: { subscriberId }, key });
  expect(response.status, response.text).toBe(201);
}

const get = (subscriberId: string, query = '', key?: string) => server.request('GET', `/v2/subscribers/${subscriberId}/preferences${query}`, { key });
const patch = (subscriberId: string, body: unknown, key?: string) => server.request('PATCH', `/v2/subscribers/${subscriberId}/preferences`, { body, key });

beforeAll(async () => {
  server = await startTestServer();
  await workflow({ workflowId: 'news', tags: ['marketing'], steps: [inApp, email] });
  await workflow({ workflowId: 'billing', steps: [email, sms], preferences: { all: { enabled: true }, channels: { sms: { enabled: false } } } });
  await workflow({ workflowId: 'security', critical: true, steps: [email] });
  await workflow({ workflowId: 'locked', critical: false, preferences: { all: { readOnly: true } }, steps: [inApp] });
  await workflow({ workflowId: 'draft', active: false, steps: [email] });
});
afterAll(async () => {
  await server?.close();
});

describe('GET /v2/subscribers/{subscriberId}/preferences', () => {
  it('answers the global preference and each active non-critical workflow, field by field', async () => {
    await subscriber('p-get');
    const response = await get('p-get');
    expect(response.status, response.text).toBe(200);
    const { global, workflows } = response.body.data;
    expect(global).toEqual({ enabled: true, channels: { in_app: true, email: true, sms: true, chat: true, push: true } });
    expect(workflows.map((w: any) => w.workflow.identifier)).toEqual(['news', 'billing']);
    const [news, billing] = workflows;
    expect(news).toEqual({
      enabled: true,
      channels: { in_app: true, email: true },
      overrides: [
        { channel: 'in_app', source: 'template' },
        { channel: 'email', source: 'template' },
      ],
      workflow: { id: ids.news, slug: 'news', identifier: 'news', name: 'news', critical: false, tags: ['marketing'], updatedAt: expect.any(String) },
    });
    expect(billing.channels).toEqual({ email: true, sms: false });
    expect(news.updatedAt).toBeUndefined();
  });

  it('criticality: critical lists critical and read-only workflows, all lists every active one', async () => {
    await subscriber('p-crit');
    const critical = await get('p-crit', '?criticality=critical');
    expect(critical.body.data.workflows.map((w: any) => [w.workflow.identifier, w.workflow.critical])).toEqual([['security', true], ['locked', true]]);
    const all = await get('p-crit', '?criticality=all');
    expect(all.body.data.workflows.map((w: any) => w.workflow.identifier)).toEqual(['news', 'billing', 'security', 'locked']);
    const bad = await get('p-crit', '?criticality=sometimes');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toEqual(['criticality must be one of the following values: critical, nonCritical, all']);
  });

  it('another environment’s subscriber, or an unknown one, is a 404', async () => {
    await subscriber('p-prod', server.prodKey);
    expect((await get('p-prod', '', server.prodKey)).status).toBe(200);
    const response = await get('p-prod');
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ statusCode: 404, message: 'Subscriber: p-prod was not found', error: 'Not Found' });
    expect((await patch('p-prod', { channels: { email: false } })).status).toBe(404);
    expect((await get('p-prod', '', server.prodKey)).body.data.global.channels.email).toBe(true);
  });
});

describe('PATCH /v2/subscribers/{subscriberId}/preferences', () => {
  it('without workflowId changes the global preference; with it one workflow (by identifier or _id)', async () => {
    await subscriber('p-patch');
    const global = await patch('p-patch', { channels: { sms: false } });
    expect(global.status, global.text).toBe(200);
    expect(global.body.data.global.channels).toEqual({ in_app: true, email: true, sms: false, chat: true, push: true });

    const byIdentifier = await patch('p-patch', { workflowId: 'news', channels: { email: false } });
    expect(byIdentifier.status, byIdentifier.text).toBe(200);
    const news = byIdentifier.body.data.workflows.find((w: any) => w.workflow.identifier === 'news');
    expect(news.channels).toEqual({ in_app: true, email: false });
    expect(news.overrides).toEqual([{ channel: 'in_app', source: 'template' }, { channel: 'email', source: 'subscriber' }]);
    expect(Date.parse(news.updatedAt)).not.toBeNaN();

    const byId = await patch('p-patch', { workflowId: ids.billing, channels: { sms: true } });
    expect(byId.body.data.workflows.find((w: any) => w.workflow.identifier === 'billing').channels).toEqual({ email: true, sms: true });

    const readBack = await get('p-patch');
    expect(readBack.body.data.global.channels.sms).toBe(false);
    expect(readBack.body.data.workflows.map((w: any) => w.channels)).toEqual([{ in_app: true, email: false }, { email: true, sms: true }]);
  });

  it('a global channel write removes that channel from every workflow record', async () => {
    await subscriber('p-wipe');
    await patch('p-wipe', { workflowId: 'news', channels: { email: false, in_app: false } });
    await patch('p-wipe', { workflowId: 'billing', channels: { email: false } });
    const response = await patch('p-wipe', { channels: { email: true } });
    const [news, billing] = response.body.data.workflows;
    expect(news.channels).toEqual({ in_app: false, email: true });
    expect(news.overrides).toEqual([{ channel: 'in_app', source: 'subscriber' }, { channel: 'email', source: 'subscriber' }]);
    expect(billing.channels).toEqual({ email: true, sms: false });
    expect(billing.overrides).toEqual([{ channel: 'email', source: 'subscriber' }, { channel: 'sms', source: 'template' }]);
  });

  it('stores, reads back and removes a schedule', async () => {
    await subscriber('p-schedule');
    const schedule = {
      isEnabled: true,
      weeklySchedule: {
        monday: { isEnabled: true, hours: [{ start: '09:00 AM', end: '05:00 PM' }] },
        saturday: { isEnabled: false },
      },
    };
    const response = await patch('p-schedule', { schedule });
    expect(response.status, response.text).toBe(200);
    expect(response.body.data.global.schedule).toEqual(schedule);
    expect((await get('p-schedule')).body.data.global.schedule).toEqual(schedule);
    const withZone = await patch('p-schedule', { schedule: { ...schedule, timezone: 'Asia/Tokyo' } });
    expect(withZone.body.data.global.schedule.timezone).toBe('Asia/Tokyo');
    await patch('p-schedule', { channels: { chat: false } });
    expect((await get('p-schedule')).body.data.global.schedule.timezone).toBe('Asia/Tokyo');
    const removed = await patch('p-schedule', { schedule: null });
    expect(removed.body.data.global.schedule).toBeUndefined();
    expect(removed.body.data.global.channels.chat).toBe(false);
  });

  it('400 on bad bodies, naming the field, and nothing changes', async () => {
    await subscriber('p-bad');
    const cases: Array<[unknown, string[]]> = [
      [{ channels: { email: 'no' } }, ['channels.email must be boolean']],
      [{ channels: { fax: false } }, ['channels.fax is not a channel (in_app, email, sms, chat, push)']],
      [{ schedule: { isEnabled: true, weeklySchedule: { funday: { isEnabled: true } } } }, ['schedule.weeklySchedule.funday is not a day of the week (monday … sunday)']],
      [
        { schedule: { isEnabled: true, weeklySchedule: { monday: { isEnabled: true, hours: [{ start: '25:00 PM', end: '05:00 PM' }] } } } },
        ['schedule.weeklySchedule.monday.hours[0].start must be a time like "09:00 AM"'],
      ],
      [
        { schedule: { isEnabled: true, weeklySchedule: { monday: { isEnabled: true, hours: [{ start: '05:00 PM', end: '09:00 AM' }] } } } },
        ['schedule.weeklySchedule.monday.hours[0].end must be after schedule.weeklySchedule.monday.hours[0].start'],
      ],
      [{ schedule: { isEnabled: true, timezone: 'Mars/Olympus' } }, ['schedule.timezone must be a valid IANA time zone']],
      [{ workflowId: 'news', schedule: { isEnabled: false } }, ['schedule can only be set on the global preference (send it without workflowId)']],
      [{ workflowId: 'security', channels: { email: false } }, ['workflowId: workflow security is critical; its preferences cannot be changed']],
      [{ workflowId: 'locked', channels: { in_app: false } }, ['workflowId: workflow locked is read-only; its preferences cannot be changed']],
    ];
    for (const [body, message] of cases) {
      const response = await patch('p-bad', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body).toMatchObject({ statusCode: 400, error: 'Bad Request', message });
    }
    const unknown = await patch('p-bad', { workflowId: 'nope', channels: { email: false } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe('Workflow with id nope not found');
    const after = await get('p-bad', '?criticality=all');
    expect(after.body.data.global).toEqual({ enabled: true, channels: { in_app: true, email: true, sms: true, chat: true, push: true } });
    expect(after.body.data.workflows.every((w: any) => w.updatedAt === undefined)).toBe(true);
  });
});

describe('PATCH /v2/subscribers/{subscriberId}/preferences/bulk', () => {
  it('updates several workflows and answers each in the level shape', async () => {
    await subscriber('p-bulk');
    const response = await server.request('PATCH', '/v2/subscribers/p-bulk/preferences/bulk', {
      body: { preferences: [{ workflowId: 'news', channels: { in_app: false } }, { workflowId: ids.billing, channels: { email: false, sms: true } }] },
    });
    expect(response.status, response.text).toBe(200);
    expect(response.body.data).toEqual([
      {
        level: 'template',
        workflow: { id: ids.news, identifier: 'news', name: 'news', critical: false, tags: ['marketing'], severity: 'none' },
        enabled: true,
        channels: { in_app: false, email: true },
      },
      {
        level: 'template',
        workflow: { id: ids.billing, identifier: 'billing', name: 'billing', critical: false, tags: [], severity: 'none' },
        enabled: true,
        channels: { email: false, sms: true },
      },
    ]);
    expect((await get('p-bulk')).body.data.workflows.map((w: any) => w.channels)).toEqual([{ in_app: false, email: true }, { email: false, sms: true }]);
  });

  it('more than 100 workflows, none, an unknown or a critical one: nothing is written', async () => {
    await subscriber('p-bulk-bad');
    const bulk = (body: unknown) => server.request('PATCH', '/v2/subscribers/p-bulk-bad/preferences/bulk', { body });
    const many = Array.from({ length: 101 }, () => ({ workflowId: 'news', channels: { email: false } }));
    const tooMany = await bulk({ preferences: many });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.message).toEqual(['preferences must NOT have more than 100 items']);
    expect((await bulk({ preferences: [] })).body.message).toEqual(['preferences must NOT have fewer than 1 items']);
    const critical = await bulk({ preferences: [{ workflowId: 'news', channels: { email: false } }, { workflowId: 'security', channels: { email: false } }] });
    expect(critical.status).toBe(400);
    expect(critical.body.message).toEqual(['preferences[1].workflowId: workflow security is critical; its preferences cannot be changed']);
    const badChannel = await bulk({ preferences: [{ workflowId: 'news', channels: { telegram: true } }] });
    expect(badChannel.body.message).toEqual(['preferences[0].channels.telegram is not a channel (in_app, email, sms, chat, push)']);
    expect((await bulk({ preferences: [{ workflowId: 'news', channels: { email: false } }, { workflowId: 'gone', channels: {} }] })).status).toBe(404);
    expect((await get('p-bulk-bad')).body.data.workflows[0].channels).toEqual({ in_app: true, email: true });
    expect((await server.request('PATCH', '/v2/subscribers/p-prod/preferences/bulk', { body: { preferences: [{ workflowId: 'news', channels: {} }] } })).status).toBe(404);
  });
});

describe('v1 routes', () => {
  it('GET /v1/subscribers/{id}/preferences: a row per active workflow, critical ones included', async () => {
    await subscriber('p-v1');
    await patch('p-v1', { workflowId: 'news', channels: { email: false } });
    const response = await server.request('GET', '/v1/subscribers/p-v1/preferences');
    expect(response.status, response.text).toBe(200);
    expect(response.body.data.map((row: any) => row.template.name)).toEqual(['news', 'billing', 'security', 'locked']);
    expect(response.body.data[0]).toEqual({
      template: { _id: ids.news, name: 'news', tags: ['marketing'], critical: false, triggers: [{ type: 'event', identifier: 'news', variables: [] }] },
      preference: {
        enabled: true,
        channels: { in_app: true, email: false },
        overrides: [{ channel: 'in_app', source: 'template' }, { channel: 'email', source: 'subscriber' }],
      },
    });
    expect(response.body.data[2].template.critical).toBe(true);
    expect(response.body.data[2].preference.channels).toEqual({ email: true });
  });

  it('GET .../preferences/{level}: global is one row, template the workflow rows, anything else a 400', async () => {
    await subscriber('p-level');
    const global = await server.request('GET', '/v1/subscribers/p-level/preferences/global');
    expect(global.status).toBe(200);
    expect(global.body.data).toEqual([{ preference: { enabled: true, channels: { in_app: true, email: true, sms: true, chat: true, push: true } } }]);
    const template = await server.request('GET', '/v1/subscribers/p-level/preferences/template');
    expect(template.body.data).toHaveLength(4);
    expect(template.body.data[1].preference.channels).toEqual({ email: true, sms: false });
    const bad = await server.request('GET', '/v1/subscribers/p-level/preferences/tenant');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toEqual(['level must be one of the following values: global, template']);
    expect((await server.request('GET', '/v1/subscribers/p-prod/preferences/global')).status).toBe(404);
  });

  it('PATCH .../preferences/{workflowId}: a channel or the whole workflow, answered as the v1 row', async () => {
    await subscriber('p-v1-patch');
    const channel = await server.request('PATCH', '/v1/subscribers/p-v1-patch/preferences/news', { body: { channel: { type: 'email', enabled: false } } });
    expect(channel.status, channel.text).toBe(200);
    expect(channel.body.data.preference).toEqual({
      enabled: true,
      channels: { in_app: true, email: false },
      overrides: [{ channel: 'in_app', source: 'template' }, { channel: 'email', source: 'subscriber' }],
    });
    const off = await server.request('PATCH', `/v1/subscribers/p-v1-patch/preferences/${ids.news}`, { body: { enabled: false } });
    expect(off.body.data.preference).toMatchObject({ enabled: false, channels: { in_app: false, email: false } });
    const v2 = (await get('p-v1-patch')).body.data.workflows[0];
    expect(v2).toMatchObject({ enabled: false, channels: { in_app: false, email: false } });
    const bad = await server.request('PATCH', '/v1/subscribers/p-v1-patch/preferences/news', { body: { channel: { type: 'fax', enabled: false } } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toEqual(['channel.type must be one of the following values: in_app, email, sms, chat, push']);
    expect((await server.request('PATCH', '/v1/subscribers/p-v1-patch/preferences/nope', { body: { enabled: false } })).status).toBe(404);
    expect((await server.request('PATCH', '/v1/subscribers/p-prod/preferences/news', { body: { enabled: false } })).status).toBe(404);
  });

  it('PATCH .../preferences: the global preference, answered as the v1 global row', async () => {
    await subscriber('p-v1-global');
    await server.request('PATCH', '/v1/subscribers/p-v1-global/preferences/news', { body: { channel: { type: 'email', enabled: false } } });
    const response = await server.request('PATCH', '/v1/subscribers/p-v1-global/preferences', {
      body: { preferences: [{ type: 'email', enabled: true }, { type: 'push', enabled: false }] },
    });
    expect(response.status, response.text).toBe(200);
    expect(response.body.data).toEqual({ preference: { enabled: true, channels: { in_app: true, email: true, sms: true, chat: true, push: false } } });
    // The global write wiped the workflow's email choice.
    expect((await get('p-v1-global')).body.data.workflows[0].channels).toEqual({ in_app: true, email: true });
    const disabled = await server.request('PATCH', '/v1/subscribers/p-v1-global/preferences', { body: { enabled: false } });
    expect(disabled.body.data.preference.enabled).toBe(false);
    expect((await get('p-v1-global')).body.data.workflows[0].channels).toEqual({ in_app: false, email: false });
    const bad = await server.request('PATCH', '/v1/subscribers/p-v1-global/preferences', { body: { enabled: 'yes' } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toEqual(['enabled must be boolean']);
  });
});

describe('read-back rules', () => {
  it('preferences are deleted with the subscriber; a new subscriber with the same id starts fresh', async () => {
    await subscriber('p-deleted');
    await patch('p-deleted', { channels: { email: false }, schedule: { isEnabled: true } });
    await patch('p-deleted', { workflowId: 'news', channels: { in_app: false } });
    const oldId = (await server.request('GET', '/v2/subscribers/p-deleted')).body.data._id;
    const rowsOf = (id: string) => server.container.db.selectFrom('subscriber_preferences').selectAll().where('environment_id', '=', server.devEnvironmentId).where('subscriber_id', '=', id).execute();
    expect(await rowsOf(oldId)).toHaveLength(2);
    expect((await server.request('DELETE', '/v2/subscribers/p-deleted')).status).toBe(200);
    expect((await get('p-deleted')).status).toBe(404);
    expect(await rowsOf(oldId)).toHaveLength(0);
    await subscriber('p-deleted');
    const fresh = await get('p-deleted');
    expect(fresh.body.data.global).toEqual({ enabled: true, channels: { in_app: true, email: true, sms: true, chat: true, push: true } });
    expect(fresh.body.data.workflows[0].channels).toEqual({ in_app: true, email: true });
  });

  it('a deleted workflow disappears from the lists', async () => {
    await workflow({ workflowId: 'short-lived', steps: [email] });
    await subscriber('p-wf-deleted');
    await patch('p-wf-deleted', { workflowId: 'short-lived', channels: { email: false } });
    expect((await get('p-wf-deleted')).body.data.workflows.map((w: any) => w.workflow.identifier)).toContain('short-lived');
    expect((await server.request('DELETE', '/v2/workflows/short-lived')).status).toBe(204);
    expect((await get('p-wf-deleted', '?criticality=all')).body.data.workflows.map((w: any) => w.workflow.identifier)).not.toContain('short-lived');
    const v1 = await server.request('GET', '/v1/subscribers/p-wf-deleted/preferences');
    expect(v1.body.data.map((row: any) => row.template.name)).not.toContain('short-lived');
    expect((await patch('p-wf-deleted', { workflowId: 'short-lived', channels: { email: true } })).status).toBe(404);
  });
});
