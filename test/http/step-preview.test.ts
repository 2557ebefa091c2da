import { Novu } from '@novu/api';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { asDashboard, createDashboardUser, signIn } from '../helpers/dashboard.js';
import { createWorkflow } from '../worker/engine-helpers.js';

// Every dashboard user and sign-in costs a scrypt hash (about a second on the loaded 2-core test machine).
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

/** POST /v2/workflows/{workflowId}/step/{stepId}/preview, the editor's live preview, through HTTP and @novu/api. */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  await createWorkflow(server, {
    workflowId: 'welcome-preview',
    steps: [
      { name: 'Welcome email', type: 'email', controlValues: { subject: 'Hi {{ subscriber.firstName }}', body: '<p>Your plan: {{ payload.plan | upcase }}</p>' } },
      { name: 'Inbox', type: 'in_app', controlValues: { subject: 'Welcome', body: 'Hello {{ subscriber.firstName }}', primaryAction: { label: 'Open {{ payload.plan }}' } } },
      { name: 'Text', type: 'sms', controlValues: { body: 'Code {{ payload.code }}' } },
      { name: 'Wait', type: 'delay', controlValues: { type: 'regular', amount: 5, unit: 'minutes' } },
    ],
  });
  await createDashboardUser(server, { email: 'preview-viewer@example.com', role: 'viewer' });
});
afterAll(async () => server?.close());

const path = (stepId: string, workflowId = 'welcome-preview') => `/v2/workflows/${workflowId}/step/${stepId}/preview`;

describe('step preview', () => {
  it('renders an email step from the stored controls with the given subscriber and payload', async () => {
    const response = await server.request('POST', path('welcome-email'), {
      body: { previewPayload: { subscriber: { firstName: 'Grace' }, payload: { plan: 'pro' } } },
    });
    expect(response.status, response.text).toBe(201);
    expect(response.body.data.result).toEqual({ type: 'email', preview: { subject: 'Hi Grace', body: '<p>Your plan: PRO</p>' } });
    expect(response.body.data.previewPayloadExample).toMatchObject({ subscriber: { firstName: 'Grace', subscriberId: 'preview-subscriber' }, payload: { plan: 'pro' } });
  });

  it("renders the editor's unsaved control values, and a sample subscriber when none is given", async () => {
    const response = await server.request('POST', path('welcome-email'), {
      body: { controlValues: { subject: 'Edited for {{ subscriber.firstName }}', body: 'Plain {{ payload.x }}' }, previewPayload: { payload: { x: 1 } } },
    });
    expect(response.body.data.result.preview).toEqual({ subject: 'Edited for Ada', body: 'Plain 1' });
    const stored = await server.request('GET', '/v2/workflows/welcome-preview');
    expect(JSON.stringify(stored.body.data)).not.toContain('Edited for');
  });

  it('renders in-app, SMS and delay steps in their shapes', async () => {
    const inApp = await server.request('POST', path('inbox'), { body: { previewPayload: { payload: { plan: 'team' } } } });
    expect(inApp.body.data.result).toEqual({ type: 'in_app', preview: { subject: 'Welcome', body: 'Hello Ada', primaryAction: { label: 'Open team' } } });
    const sms = await server.request('POST', path('text'), { body: { previewPayload: { payload: { code: '1234' } } } });
    expect(sms.body.data.result).toEqual({ type: 'sms', preview: { body: 'Code 1234' } });
    const delay = await server.request('POST', path('wait'), { body: {} });
    expect(delay.body.data.result).toEqual({ type: 'delay', preview: { type: 'regular', amount: 5, unit: 'minutes' } });
  });

  it('answers a template that does not render as a result error, not an HTTP error', async () => {
    const response = await server.request('POST', path('welcome-email'), { body: { controlValues: { subject: '{{ payload.plan | shout }}', body: 'x' } } });
    expect(response.status).toBe(201);
    expect(response.body.data.result.type).toBe('email');
    expect(response.body.data.result.preview).toBeUndefined();
    expect(response.body.data.result.error).toMatchObject({ title: 'Template could not be rendered', message: expect.stringMatching(/subject: .*shout/) });
  });

  it('answers 404 for an unknown workflow or step or another environment, 400 for a malformed body', async () => {
    expect((await server.request('POST', path('nope'), { body: {} })).status).toBe(404);
    expect((await server.request('POST', path('welcome-email', 'missing'), { body: {} })).status).toBe(404);
    expect((await server.request('POST', path('welcome-email'), { body: {}, key: server.prodKey })).status).toBe(404);
    const bad = await server.request('POST', path('welcome-email'), { body: { controlValues: 'subject' } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toEqual(['controlValues must be object']);
  });

  it('is a read for the dashboard: viewers may preview (with the CSRF token)', async () => {
    const viewer = await signIn(server, 'preview-viewer@example.com');
    const response = await asDashboard(server, viewer, 'POST', path('welcome-email'), { body: { previewPayload: { payload: { plan: 'free' } } } });
    expect(response.status).toBe(201);
    expect(response.body.data.result.preview.body).toBe('<p>Your plan: FREE</p>');
    expect((await asDashboard(server, viewer, 'POST', path('welcome-email'), { body: {}, csrf: false })).status).toBe(403);
  });

  it('works through @novu/api workflows.steps.generatePreview', async () => {
    const novu = new Novu({ secretKey: server.devKey, serverURL: server.url, retryConfig: { strategy: 'none' } });
    const response = await novu.workflows.steps.generatePreview({
      workflowId: 'welcome-preview',
      stepId: 'welcome-email',
      generatePreviewRequestDto: { previewPayload: { subscriber: { firstName: 'Linus' }, payload: { plan: 'sdk' } } },
    });
    expect(response.result.result).toMatchObject({ type: 'email', preview: { subject: 'Hi Linus', body: '<p>Your plan: SDK</p>' } });
  });
});
