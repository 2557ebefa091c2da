import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Novu } from '@novu/api';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The `@novu/api` SDK's subscriber preference methods against Herald: list, update global (channels and schedule),
 * update one workflow, bulk. The SDK parses each answer with its own zod schemas (GetSubscriberPreferencesDto,
 * GetPreferencesResponseDto), so a wrong envelope, field or enum value fails here.
 */
let server: TestServer;
let novu: Novu;
let newsId: string;

beforeAll(async () => {
  server = await startTestServer();
  novu = new Novu({ secretKey: server.devKey, serverURL: server.url, retryConfig: { strategy: 'none' } });
  const news = await server.request('POST', '/v2/workflows', {
    body: { workflowId: 'sdk-news', name: 'News', active: true, tags: ['marketing'], steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Hi' } }, { name: 'mail', type: 'email', controlValues: { subject: 'Hi', body: 'Hello' } }] },
  });
  expect(news.status, news.text).toBe(201);
  newsId = news.body.data._id;
  const alerts = await server.request('POST', '/v2/workflows', {
    body: { workflowId: 'sdk-alerts', name: 'Alerts', active: true, critical: true, steps: [{ name: 'text', type: 'sms', controlValues: { body: 'Hi' } }] },
  });
  expect(alerts.status, alerts.text).toBe(201);
  await novu.subscribers.create({ subscriberId: 'sdk-pref', email: 'pref@example.com' });
});
afterAll(async () => {
  await server?.close();
});

describe('@novu/api subscribers.preferences against Herald', () => {
  it('list: the global preference and the non-critical workflows by default, all with criticality', async () => {
    const listed = await novu.subscribers.preferences.list({ subscriberId: 'sdk-pref' });
    expect(listed.result.global).toEqual({ enabled: true, channels: { inApp: true, email: true, sms: true, chat: true, push: true } });
    expect(listed.result.workflows).toHaveLength(1);
    const [news] = listed.result.workflows;
    expect(news).toMatchObject({ enabled: true, channels: { inApp: true, email: true }, workflow: { slug: 'sdk-news', identifier: 'sdk-news', name: 'News' } });
    expect(news.overrides).toEqual([{ channel: 'in_app', source: 'template' }, { channel: 'email', source: 'template' }]);
    const all = await novu.subscribers.preferences.list({ subscriberId: 'sdk-pref', criticality: 'all' });
    expect(all.result.workflows.map((w) => w.workflow.identifier)).toEqual(['sdk-news', 'sdk-alerts']);
  });

  it('update global: channels and a schedule, read back through list', async () => {
    const schedule = { isEnabled: true, weeklySchedule: { monday: { isEnabled: true, hours: [{ start: '09:00 AM', end: '05:00 PM' }] } } };
    const updated = await novu.subscribers.preferences.update({ channels: { sms: false, inApp: true }, schedule }, 'sdk-pref');
    expect(updated.result.global.channels).toEqual({ inApp: true, email: true, sms: false, chat: true, push: true });
    expect(updated.result.global.schedule).toEqual(schedule);
    const listed = await novu.subscribers.preferences.list({ subscriberId: 'sdk-pref' });
    expect(listed.result.global.schedule).toEqual(schedule);
  });

  it('update one workflow, by identifier and by _id', async () => {
    const byIdentifier = await novu.subscribers.preferences.update({ workflowId: 'sdk-news', channels: { email: false } }, 'sdk-pref');
    const news = byIdentifier.result.workflows.find((w) => w.workflow.identifier === 'sdk-news')!;
    expect(news.channels).toEqual({ inApp: true, email: false });
    expect(news.overrides).toContainEqual({ channel: 'email', source: 'subscriber' });
    expect(news.updatedAt).toEqual(expect.any(String));
    const byId = await novu.subscribers.preferences.update({ workflowId: newsId, channels: { inApp: false } }, 'sdk-pref');
    expect(byId.result.workflows[0].channels).toEqual({ inApp: false, email: false });
  });

  it('bulk: several workflows at once, answered in the level shape', async () => {
    const bulk = await novu.subscribers.preferences.bulkUpdate({ preferences: [{ workflowId: 'sdk-news', channels: { email: true, inApp: true } }] }, 'sdk-pref');
    expect(bulk.result).toEqual([
      {
        level: 'template',
        workflow: { id: newsId, identifier: 'sdk-news', name: 'News', critical: false, tags: ['marketing'], severity: 'none' },
        enabled: true,
        channels: { inApp: true, email: true },
      },
    ]);
    const listed = await novu.subscribers.preferences.list({ subscriberId: 'sdk-pref' });
    expect(listed.result.workflows[0].channels).toEqual({ inApp: true, email: true });
  });

  it('errors reach the SDK as its error types: 404 for an unknown subscriber, 400 for a bad schedule', async () => {
    await expect(novu.subscribers.preferences.list({ subscriberId: 'nobody' })).rejects.toMatchObject({ statusCode: 404 });
    await expect(
      novu.subscribers.preferences.update({ schedule: { isEnabled: true, weeklySchedule: { monday: { isEnabled: true, hours: [{ start: '25:00 PM', end: '05:00 PM' }] } } } }, 'sdk-pref'),
    ).rejects.toMatchObject({ statusCode: 400 });
  });
});
