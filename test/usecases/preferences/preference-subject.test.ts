import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError } from '../../../src/domain/errors.js';
import { getSubscriberPreferences } from '../../../src/usecases/preferences/get-subscriber-preferences.js';
import { updateGlobalPreference } from '../../../src/usecases/preferences/update-global-preference.js';
import { updateWorkflowPreferences } from '../../../src/usecases/preferences/update-workflow-preferences.js';
import { startTestServer, type TestServer } from '../../helpers/test-server.js';

/**
 * The preference use-cases called as the Inbox will call them: with the subscriber record a session already holds,
 * no HTTP involved. A record of another environment is refused like an unknown subscriberId.
 */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  expect((await server.request('POST', '/v2/subscribers', { body: { subscriberId: 'uc-sub' } })).status).toBe(201);
  expect((await server.request('POST', '/v2/workflows', { body: { workflowId: 'uc-news', name: 'News', active: true, steps: [{ name: 'mail', type: 'email', controlValues: { subject: 'Hi', body: 'Hi' } }] } })).status).toBe(201);
});
afterAll(async () => {
  await server?.close();
});

describe('preference use-cases with a subscriber record', () => {
  it('read and write through the record, and the server API sees the same state', async () => {
    const subscriber = (await server.deps.store.subscribers.findBySubscriberId(server.devEnvironmentId, 'uc-sub'))!;
    const subject = { environmentId: server.devEnvironmentId, subscriber };
    await updateGlobalPreference(server.deps, { ...subject, channels: { sms: false } });
    const [news] = await updateWorkflowPreferences(server.deps, { ...subject, changes: [{ workflowId: 'uc-news', channels: { email: false } }] });
    expect(news.channels).toEqual({ email: false });
    const view = await getSubscriberPreferences(server.deps, subject);
    expect(view.global.channels.sms).toBe(false);
    expect(view.workflows.map((w) => [w.workflow.workflowId, w.channels])).toEqual([['uc-news', { email: false }]]);
    const overHttp = await server.request('GET', '/v2/subscribers/uc-sub/preferences');
    expect(overHttp.body.data.workflows[0].channels).toEqual({ email: false });
  });

  it('a record of another environment, or a deleted one, is a NotFoundError', async () => {
    const subscriber = (await server.deps.store.subscribers.findBySubscriberId(server.devEnvironmentId, 'uc-sub'))!;
    await expect(getSubscriberPreferences(server.deps, { environmentId: server.prodEnvironmentId, subscriber })).rejects.toBeInstanceOf(NotFoundError);
    await expect(updateGlobalPreference(server.deps, { environmentId: server.prodEnvironmentId, subscriber, channels: { email: false } })).rejects.toBeInstanceOf(NotFoundError);
    await expect(getSubscriberPreferences(server.deps, { environmentId: server.devEnvironmentId, subscriber: { ...subscriber, deleted: true } })).rejects.toBeInstanceOf(NotFoundError);
    expect((await getSubscriberPreferences(server.deps, { environmentId: server.devEnvironmentId, subscriberId: 'uc-sub' })).global.channels.email).toBe(true);
  });
});
