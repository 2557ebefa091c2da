import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Novu } from '@novu/node';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The legacy `@novu/node` 2.6.6 SDK's preference methods, unchanged, against a real Herald: getPreference,
 * getGlobalPreference, getPreferenceByLevel, updatePreference, updateGlobalPreference. The SDK is axios over the v1
 * routes and returns the raw answer, so the shapes are checked here field by field.
 */
let server: TestServer;
let novu: Novu;
let digestId: string;

beforeAll(async () => {
  server = await startTestServer();
  novu = new Novu(server.devKey, { backendUrl: server.url });
  const digest = await server.request('POST', '/v2/workflows', {
    body: { workflowId: 'node-digest', name: 'Digest', active: true, steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Hi' } }, { name: 'mail', type: 'email', controlValues: { subject: 'Hi', body: 'Hello' } }] },
  });
  expect(digest.status, digest.text).toBe(201);
  digestId = digest.body.data._id;
  // Created through the v2 route: this file is about the preference methods.
  expect((await server.request('POST', '/v2/subscribers', { body: { subscriberId: 'node-pref', email: 'node@example.com' } })).status).toBe(201);
});
afterAll(async () => {
  await server?.close();
});

const allOn = { in_app: true, email: true, sms: true, chat: true, push: true };

describe('@novu/node subscribers preference methods against Herald', () => {
  it('getPreference: one v1 row per workflow', async () => {
    const { status, data } = await novu.subscribers.getPreference('node-pref');
    expect(status).toBe(200);
    expect(data.data).toEqual([
      {
        template: { _id: digestId, name: 'Digest', tags: [], critical: false, triggers: [{ type: 'event', identifier: 'node-digest', variables: [] }] },
        preference: { enabled: true, channels: { in_app: true, email: true }, overrides: [{ channel: 'in_app', source: 'template' }, { channel: 'email', source: 'template' }] },
      },
    ]);
    const withInactive = await novu.subscribers.getPreference('node-pref', { includeInactiveChannels: false });
    expect(withInactive.data.data).toHaveLength(1);
  });

  it('getGlobalPreference and getPreferenceByLevel', async () => {
    expect((await novu.subscribers.getGlobalPreference('node-pref')).data.data).toEqual([{ preference: { enabled: true, channels: allOn } }]);
    expect((await novu.subscribers.getPreferenceByLevel('node-pref', 'global' as never)).data.data).toEqual([{ preference: { enabled: true, channels: allOn } }]);
    const template = await novu.subscribers.getPreferenceByLevel('node-pref', 'template' as never);
    expect(template.data.data.map((row: any) => row.template._id)).toEqual([digestId]);
  });

  it('updatePreference: one channel of a workflow, then the whole workflow', async () => {
    const channel = await novu.subscribers.updatePreference('node-pref', digestId, { channel: { type: 'email' as never, enabled: false } });
    expect(channel.status).toBe(200);
    expect(channel.data.data.preference).toEqual({
      enabled: true,
      channels: { in_app: true, email: false },
      overrides: [{ channel: 'in_app', source: 'template' }, { channel: 'email', source: 'subscriber' }],
    });
    const off = await novu.subscribers.updatePreference('node-pref', 'node-digest', { enabled: false });
    expect(off.data.data.preference).toMatchObject({ enabled: false, channels: { in_app: false, email: false } });
    const back = await novu.subscribers.updatePreference('node-pref', 'node-digest', { enabled: true });
    expect(back.data.data.preference.channels).toEqual({ in_app: true, email: false });
    expect((await novu.subscribers.getPreference('node-pref')).data.data[0].preference.channels).toEqual({ in_app: true, email: false });
  });

  it('updateGlobalPreference: channels and enabled; a global channel write replaces the workflow choice', async () => {
    const updated = await novu.subscribers.updateGlobalPreference('node-pref', { preferences: [{ type: 'email' as never, enabled: true }, { type: 'sms' as never, enabled: false }] });
    expect(updated.status).toBe(200);
    expect(updated.data.data).toEqual({ preference: { enabled: true, channels: { ...allOn, sms: false } } });
    expect((await novu.subscribers.getPreference('node-pref')).data.data[0].preference.channels).toEqual({ in_app: true, email: true });
    const disabled = await novu.subscribers.updateGlobalPreference('node-pref', { enabled: false });
    expect(disabled.data.data.preference.enabled).toBe(false);
    expect((await novu.subscribers.getGlobalPreference('node-pref')).data.data[0].preference.enabled).toBe(false);
  });

  it('errors: an unknown subscriber is a 404, a bad level a 400', async () => {
    await expect(novu.subscribers.getPreference('nobody')).rejects.toMatchObject({ response: { status: 404 } });
    await expect(novu.subscribers.getPreferenceByLevel('node-pref', 'tenant' as never)).rejects.toMatchObject({ response: { status: 400 } });
  });
});
