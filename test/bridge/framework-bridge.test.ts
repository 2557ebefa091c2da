import { Novu } from '@novu/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFake, type HttpFake } from '../fakes/http-fake.js';
import { startSmtpFake, type SmtpFake } from '../fakes/smtp-fake.js';
import { freePort } from '../helpers/herald-process.js';
import { novuCliEntry, runNovuSync, startFrameworkBridge, type FrameworkBridge } from '../helpers/framework-bridge.js';
import { SCALEOUT_SECRET, startScaleoutProcesses, type ScaleoutProcesses } from '../helpers/scaleout-processes.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Code-first workflows end to end, as a Novu user runs them: the real @novu/framework 2.13.2 serves a bridge
 * (test/helpers/framework-bridge-app.mjs, NODE_ENV=production so every call must carry Herald's HMAC), the real
 * `novu` CLI 2.20.1 syncs it with `-a` pointing at Herald, and @novu/api triggers. Embedded: one Herald process with
 * its worker. HERALD_TEST_MODE=scaleout: separate `herald api` and `herald worker` processes over PostgreSQL and
 * Redis, so every bridge call comes from the worker process.
 */
const SCALEOUT = process.env.HERALD_TEST_MODE === 'scaleout';
const ENV = { HERALD_OUTBOUND_ALLOW: '127.0.0.1', HERALD_QUEUE_POLL_MS: '20', HERALD_JOB_ATTEMPTS: '4', HERALD_JOB_BACKOFF_MS: '100' };
const TERMINAL = new Set(['completed', 'failed', 'skipped', 'merged', 'canceled']);

interface Herald {
  url: string;
  key: string;
  close(): Promise<void>;
}

let herald: Herald;
let bridge: FrameworkBridge;
let smtp: SmtpFake;
let slack: HttpFake;
let novu: Novu;
let cli: string;
let embedded: TestServer | undefined;
let scaleout: ScaleoutProcesses | undefined;

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(herald.url + path, {
    method,
    headers: { authorization: `ApiKey ${herald.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: response.status, body: parsed, text };
}

function sync(bridgeUrl = bridge.url, secretKey = herald.key) {
  return runNovuSync(cli, { bridgeUrl, secretKey, apiUrl: herald.url });
}

async function trigger(workflowId: string, payload: Record<string, unknown>, subscriberId = 'ada'): Promise<string> {
  const result = await novu.trigger({ workflowId, to: { subscriberId, email: `${subscriberId}@example.com`, firstName: 'Ada' }, payload });
  return result.result.transactionId!;
}

/** The events of a transaction once every job has ended. */
async function settled(transactionId: string, timeoutMs = 20_000): Promise<any[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await api('GET', `/v1/notifications?transactionId=${encodeURIComponent(transactionId)}&limit=50`);
    expect(response.status, response.text).toBe(200);
    const events = response.body.data as any[];
    if (events.length > 0 && events.every((event) => event.jobs.length > 0 && event.jobs.every((job: any) => TERMINAL.has(job.status)))) return events;
    if (Date.now() > deadline) throw new Error(`transaction ${transactionId} did not settle: ${JSON.stringify(events.map((e) => e.jobs.map((j: any) => [j.type, j.status])))}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function messagesOf(transactionId: string): Promise<any[]> {
  const response = await api('GET', `/v1/messages?transactionId=${encodeURIComponent(transactionId)}&limit=100`);
  expect(response.status, response.text).toBe(200);
  return response.body.data;
}

const details = (job: any): string[] => job.executionDetails.map((detail: any) => `${detail.status}: ${detail.detail}`);

async function executeCalls(workflowId: string): Promise<number> {
  return (await bridge.calls()).filter((call) => call.action === 'execute' && call.workflowId === workflowId).length;
}

async function waitForMail(subject: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const mail = smtp.mails.find((candidate) => candidate.parsed.subject === subject);
    if (mail) return mail;
    if (Date.now() > deadline) throw new Error(`no mail "${subject}"; got ${smtp.mails.map((m) => m.parsed.subject).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  cli = await novuCliEntry();
  smtp = await startSmtpFake();
  slack = await startHttpFake(() => ({ status: 200, body: 'ok' }));
  if (SCALEOUT) {
    scaleout = await startScaleoutProcesses({ apis: 1, workers: 1, env: ENV });
    herald = { url: scaleout.apis[0].url, key: SCALEOUT_SECRET, close: () => scaleout!.close() };
  } else {
    embedded = await startTestServer({ worker: true, env: ENV });
    herald = { url: embedded.url, key: embedded.devKey, close: () => embedded!.close() };
  }
  // On a port below the kernel's ephemeral range (freePort): the tests below stop the bridge and start it again on its
  // port, and a port the kernel handed out for listen(0) could meanwhile go to another file's fake or a client
  // connection's local end (herald-process.ts's freePort says how a clean-clone CI once hit that).
  bridge = await startFrameworkBridge({ secretKey: herald.key, port: await freePort() });
  novu = new Novu({ secretKey: herald.key, serverURL: herald.url, retryConfig: { strategy: 'none' } });
  for (const body of [
    { providerId: 'novu', channel: 'in_app' },
    { providerId: 'nodemailer', channel: 'email', credentials: { host: '127.0.0.1', port: String(smtp.port), from: 'noreply@herald.test' } },
    { providerId: 'slack', channel: 'chat', credentials: { webhookUrl: `${slack.url}/hook` } },
  ]) {
    const response = await api('POST', '/v1/integrations', { active: true, check: false, ...body });
    expect(response.status, response.text).toBe(201);
  }
  // Longer than novuCliEntry's own 300 s bound: on a clean clone it installs the CLI from the registry first (1m44s
  // from a cold npm cache at load 7.6; a clean clone's CI at load 5-8 passed 180 s during that install).
}, 420_000);

afterAll(async () => {
  await bridge?.stop();
  await herald?.close();
  await smtp?.close();
  await slack?.close();
});

describe(`code-first workflows through a @novu/framework bridge (${SCALEOUT ? 'scale-out' : 'embedded'})`, () => {
  it('npx novu sync registers the bridge workflows as external workflows', async () => {
    const before = await api('POST', '/v1/bridge/diff', { bridgeUrl: bridge.url });
    expect(before.status, before.text).toBe(200);
    expect(before.body.data.created.sort()).toEqual(['deploy-alert', 'flaky', 'order-digest', 'quiet', 'refused', 'reminder', 'removable', 'scoring', 'throttled', 'welcome']);

    const result = await sync();
    expect(result.status, result.output).toBe(0);
    // Every call the bridge got from Herald was signed (the CLI's own unsigned agent probe is refused with 401).
    const calls = await bridge.calls();
    expect(calls.some((call) => call.action === 'discover' && call.signed)).toBe(true);

    const listed = await api('GET', '/v2/workflows?limit=100');
    expect(listed.status).toBe(200);
    const welcome = listed.body.data.workflows.find((workflow: any) => workflow.workflowId === 'welcome');
    expect(welcome).toMatchObject({ origin: 'external', name: 'Welcome', tags: ['onboarding'], severity: 'high' });
    const full = await api('GET', '/v2/workflows/welcome');
    expect(full.body.data.origin).toBe('external');
    expect(full.body.data.payloadSchema.required).toEqual(['name', 'plan']);
    expect(full.body.data.steps.map((step: any) => [step.stepId, step.type, step.origin])).toEqual([
      ['hello', 'in_app', 'external'],
      ['welcome-email', 'email', 'external'],
    ]);
    expect(full.body.data.steps[0].controls.dataSchema.properties.greeting).toMatchObject({ type: 'string', default: 'Hello' });

    const after = await api('POST', '/v1/bridge/diff', { bridgeUrl: bridge.url });
    expect(after.body.data).toMatchObject({ created: [], updated: [], deleted: [] });
    const status = await api('GET', '/v1/bridge/status');
    expect(status.body.data).toMatchObject({ bridgeUrl: bridge.url, status: 'ok', health: { sdkVersion: '2.13.2', status: 'ok' } });
    const valid = await api('POST', '/v1/bridge/validate', { bridgeUrl: bridge.url });
    expect(valid.body.data).toEqual({ isValid: true });
  });

  it('computes in-app and email content in code from the payload and the controls', async () => {
    const transactionId = await trigger('welcome', { name: 'Ada', plan: 'pro' });
    const [event] = await settled(transactionId);
    expect(event.jobs.map((job: any) => [job.type, job.status])).toEqual([
      ['in_app', 'completed'],
      ['email', 'completed'],
    ]);
    const messages = await messagesOf(transactionId);
    const inApp = messages.find((message) => message.channel === 'in_app');
    expect(inApp).toMatchObject({ subject: 'Hello, Ada!', content: 'You are on the pro plan.', templateIdentifier: 'welcome', tags: ['onboarding'], severity: 'high', data: { plan: 'pro' } });
    expect(inApp.cta.action.buttons[0]).toMatchObject({ type: 'primary', content: 'Open', url: '/plans/pro' });
    const mail = await waitForMail('Welcome aboard, Ada');
    expect(mail.parsed.html).toContain('thanks for choosing pro');
    expect(mail.parsed.html).toContain('The Acme team');
    // The timeline shows the bridge call with its request summary and the code's outputs.
    const call = event.jobs[1].executionDetails.find((detail: any) => detail.detail.startsWith('Bridge POST'));
    expect(call.detail).toContain('action=execute&workflowId=welcome&stepId=welcome-email');
    const raw = JSON.parse(call.raw);
    expect(raw.request).toMatchObject({ workflowId: 'welcome', stepId: 'welcome-email', status: 200 });
    expect(raw.request.state).toEqual([{ stepId: 'hello', status: 'completed' }]);
    expect(raw.response.outputs.subject).toBe('Welcome aboard, Ada');
  });

  it("honours the code's preferences, tags and severity", async () => {
    const stored = await api('GET', '/v2/workflows/quiet');
    expect(stored.body.data).toMatchObject({ tags: ['digest', 'weekly'], severity: 'low', preferenceSettings: { in_app: true, email: false } });
    const before = smtp.mails.length;
    const transactionId = await trigger('quiet', {}, 'quinn');
    const [event] = await settled(transactionId);
    expect(event.jobs.map((job: any) => [job.type, job.status])).toEqual([
      ['in_app', 'completed'],
      ['email', 'skipped'],
    ]);
    const [message] = await messagesOf(transactionId);
    expect(message).toMatchObject({ channel: 'in_app', content: 'In the inbox only', tags: ['digest', 'weekly'], severity: 'low' });
    // The subscriber turns email on for this workflow: the next event sends it.
    const opted = await api('PATCH', '/v2/subscribers/quinn/preferences', { workflowId: 'quiet', channels: { email: true } });
    expect(opted.status, opted.text).toBe(200);
    const second = await trigger('quiet', {}, 'quinn');
    const [next] = await settled(second);
    expect(next.jobs.map((job: any) => job.status)).toEqual(['completed', 'completed']);
    await waitForMail('Never sent');
    expect(smtp.mails.length).toBe(before + 1);
  });

  it('a trigger may carry per-trigger control values', async () => {
    const raw = await api('POST', '/v1/events/trigger', {
      name: 'welcome',
      to: { subscriberId: 'ada' },
      payload: { name: 'Ada', plan: 'free', noEmail: true },
      controls: { steps: { hello: { greeting: 'Yo' } } },
    });
    expect(raw.status, raw.text).toBe(201);
    await settled(raw.body.data.transactionId);
    const [message] = await messagesOf(raw.body.data.transactionId);
    expect(message.subject).toBe('Yo, Ada!');
  });

  it('skips a step when the code says so', async () => {
    const before = smtp.mails.length;
    const transactionId = await trigger('welcome', { name: 'Bob', plan: 'free', noEmail: true });
    const [event] = await settled(transactionId);
    const email = event.jobs.find((job: any) => job.type === 'email');
    expect(email.status).toBe('skipped');
    expect(details(email).join('\n')).toContain("skipped by the workflow's code");
    expect((await messagesOf(transactionId)).map((message) => message.channel)).toEqual(['in_app']);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(smtp.mails.length).toBe(before);
  });

  it('control values edited through the API change the next message', async () => {
    const refused = await api('PUT', '/v1/bridge/controls/welcome/hello', { variables: { greeting: 5 } });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.message.join(' ')).toContain('variables.greeting must be string');
    const put = await api('PUT', '/v1/bridge/controls/welcome/hello', { variables: { greeting: 'Howdy' } });
    expect(put.status, put.text).toBe(200);
    const got = await api('GET', '/v1/bridge/controls/welcome/hello');
    expect(got.body.data).toMatchObject({ workflowId: 'welcome', stepId: 'hello', values: { greeting: 'Howdy' } });
    expect(got.body.data.schema.properties.greeting.type).toBe('string');
    const transactionId = await trigger('welcome', { name: 'Cleo', plan: 'free', noEmail: true });
    await settled(transactionId);
    const [inApp] = await messagesOf(transactionId);
    expect(inApp.subject).toBe('Howdy, Cleo!');
    const preview = await api('POST', '/v1/bridge/preview/welcome/hello', { controls: { greeting: 'Hi' }, payload: { name: 'Dan', plan: 'pro' } });
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body.data.outputs.subject).toBe('Hi, Dan!');
  });

  it('a custom step computes an output that a later step uses', async () => {
    const transactionId = await trigger('scoring', { points: 150 });
    const [event] = await settled(transactionId);
    expect(event.jobs.map((job: any) => [job.type, job.status])).toEqual([
      ['custom', 'completed'],
      ['in_app', 'completed'],
    ]);
    const [message] = await messagesOf(transactionId);
    expect(message.content).toBe('Your tier is gold (150 points)');
    const custom = event.jobs[0].executionDetails.find((detail: any) => detail.detail.includes('computed by the bridge'));
    expect(JSON.parse(custom.raw)).toEqual({ points: 150, tier: 'gold' });
  });

  it("passes the code's provider overrides to Herald's provider", async () => {
    const transactionId = await trigger('deploy-alert', { version: '1.2.3' });
    const [event] = await settled(transactionId);
    expect(event.jobs[0].status).toBe('completed');
    const sent = slack.requests.map((request) => JSON.parse(request.body)).find((body) => body.text === 'Deployed 1.2.3');
    expect(sent).toEqual({ text: 'Deployed 1.2.3', blocks: [{ type: 'section', text: { type: 'mrkdwn', text: '*Deployed 1.2.3*' } }] });
  });

  it('a delay waits as long as the code says', async () => {
    const started = Date.now();
    const transactionId = await trigger('reminder', { seconds: 1, what: 'call Bob' });
    const [event] = await settled(transactionId);
    expect(event.jobs.map((job: any) => [job.type, job.status])).toEqual([
      ['delay', 'completed'],
      ['in_app', 'completed'],
    ]);
    const [message] = await messagesOf(transactionId);
    expect(message.content).toBe('Reminder: call Bob');
    expect(Date.parse(message.createdAt) - started).toBeGreaterThanOrEqual(900);
  });

  it('digests several triggers into one email that lists them', async () => {
    const items = ['kettle', 'teapot', 'mug'];
    const transactionIds: string[] = [];
    for (const item of items) transactionIds.push(await trigger('order-digest', { item }, 'dora'));
    const events = (await Promise.all(transactionIds.map((id) => settled(id)))).flat();
    const statuses = events.map((event) => event.jobs[0].status).sort();
    expect(statuses).toEqual(['completed', 'merged', 'merged']);
    const mail = await waitForMail('3 new orders');
    for (const item of items) expect(mail.parsed.html).toContain(`<li>${item}</li>`);
    expect(smtp.mails.filter((candidate) => candidate.parsed.subject?.endsWith('new orders')).length).toBe(1);
  });

  it('a throttle from code lets one event through per window', async () => {
    const first = await trigger('throttled', {}, 'tess');
    const [passed] = await settled(first);
    expect(passed.jobs.map((job: any) => [job.type, job.status])).toEqual([
      ['throttle', 'completed'],
      ['in_app', 'completed'],
    ]);
    const second = await trigger('throttled', {}, 'tess');
    const [held] = await settled(second);
    expect(held.jobs.map((job: any) => job.status)).toEqual(['skipped', 'skipped']);
    expect(details(held.jobs[0]).join('\n')).toContain('Throttled: more than 1 per 1 minutes');
  });

  it('retries a bridge answering 500, then delivers', async () => {
    const transactionId = await trigger('flaky', { n: 1 });
    const [event] = await settled(transactionId);
    expect(event.jobs[0].status).toBe('completed');
    const texts = details(event.jobs[0]).join('\n');
    expect(texts).toContain('Attempt 1 of 4 failed, will retry: Bridge answered 500 BridgeError: Database unavailable (1)');
    expect(texts).toContain('Attempt 2 of 4 failed, will retry: Bridge answered 500 BridgeError: Database unavailable (2)');
    expect(await executeCalls('flaky')).toBe(3);
    expect((await messagesOf(transactionId))[0].content).toBe('Flaky 1 finally answered');
  });

  it('fails a job the bridge refuses with a 400, without retrying, and says why', async () => {
    const transactionId = await trigger('refused', {});
    const [event] = await settled(transactionId);
    expect(event.jobs[0].status).toBe('failed');
    const failed = event.jobs[0].executionDetails.filter((detail: any) => detail.status === 'Failed');
    expect(failed).toHaveLength(1);
    expect(failed[0].detail).toBe('Bridge answered 400 AccountClosedError: Account 42 is closed');
    expect(JSON.parse(failed[0].raw).error).toMatchObject({ code: 'AccountClosedError' });
    // Nothing was computed, so nothing reaches the Inbox (no empty error message).
    expect(await messagesOf(transactionId)).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await executeCalls('refused')).toBe(1);
  });

  it('refuses a payload that violates the workflow schema at trigger time', async () => {
    const executes = (await bridge.calls()).filter((call) => call.action === 'execute').length;
    await expect(trigger('welcome', { name: 'Eve', plan: 'enterprise' })).rejects.toMatchObject({ statusCode: 400 });
    const raw = await api('POST', '/v1/events/trigger', { name: 'welcome', to: 'ada', payload: { plan: 'pro' } });
    expect(raw.status).toBe(400);
    expect(raw.body.message).toContain('payload.name is required');
    expect((await bridge.calls()).filter((call) => call.action === 'execute').length).toBe(executes);
  });

  it('keeps code-first steps read-only in /v2/workflows', async () => {
    const put = await api('PUT', '/v2/workflows/welcome', { name: 'Mine now', steps: [{ name: 'x', type: 'in_app', controlValues: { body: 'x' } }] });
    expect(put.status).toBe(400);
    expect(put.body.message.join(' ')).toContain('has origin external');
    const patch = await api('PATCH', '/v2/workflows/welcome', { name: 'Renamed' });
    expect(patch.status).toBe(400);
    expect(patch.body.message.join(' ')).toContain('origin external');
    const off = await api('PATCH', '/v2/workflows/welcome', { active: false });
    expect(off.status, off.text).toBe(200);
    expect((await api('PATCH', '/v2/workflows/welcome', { active: true })).status).toBe(200);
  });

  it('refuses unusable bridges with a 400 that says why, storing nothing', async () => {
    const listBefore = (await api('GET', '/v2/workflows?limit=100')).body.data.totalCount;
    const closedPort = await freePort();
    const html = await startHttpFake(() => ({ status: 200, headers: { 'content-type': 'text/html' }, body: '<html>my app</html>' }));
    const other = await startFrameworkBridge({ secretKey: 'sk_some_other_environment_key' });
    try {
      const cases: Array<[string, string]> = [
        [`http://127.0.0.1:${closedPort}/api/novu`, 'could not be reached'],
        ['http://169.254.169.254/api/novu', 'refused: link-local address'],
        [`${html.url}/api/novu`, 'not a JSON object'],
        [other.url, 'SignatureMismatchError'],
      ];
      for (const [bridgeUrl, reason] of cases) {
        const response = await api('POST', '/v1/bridge/sync?source=cli', { bridgeUrl });
        expect(response.status, `${bridgeUrl}: ${response.text}`).toBe(400);
        expect(response.body.message.join(' ')).toContain(reason);
      }
      // The real CLI exits 1 on Herald's 400.
      const viaCli = await sync(other.url);
      expect(viaCli.status).toBe(1);
      expect((await api('GET', '/v2/workflows?limit=100')).body.data.totalCount).toBe(listBefore);
      expect((await api('GET', '/v1/bridge/status')).body.data.bridgeUrl).toBe(bridge.url);
      const invalid = await api('POST', '/v1/bridge/validate', { bridgeUrl: `http://127.0.0.1:${closedPort}/api/novu` });
      expect(invalid.body.data.isValid).toBe(false);
    } finally {
      await html.close();
      await other.stop();
    }
  });

  it('a re-sync after removing a workflow from the code deletes it', async () => {
    await bridge.stop();
    bridge = await startFrameworkBridge({ secretKey: herald.key, port: bridge.port, without: ['removable'] });
    const result = await sync();
    expect(result.status, result.output).toBe(0);
    expect((await api('GET', '/v2/workflows/removable')).status).toBe(404);
    expect((await api('GET', '/v2/workflows/welcome')).status).toBe(200);
    // Control values edited earlier survive the re-sync.
    expect((await api('GET', '/v1/bridge/controls/welcome/hello')).body.data.values).toEqual({ greeting: 'Howdy' });
    const trigger422 = await api('POST', '/v1/events/trigger', { name: 'removable', to: 'ada', payload: {} });
    expect(trigger422.status).toBe(422);

    // A trigger naming a bridge runs a workflow that was never synced (workflow.trigger() from a dev tunnel).
    const other = await startFrameworkBridge({ secretKey: herald.key });
    try {
      const stateless = await api('POST', '/v1/events/trigger', { name: 'removable', to: 'ada', payload: {}, bridgeUrl: other.url });
      expect(stateless.status, stateless.text).toBe(201);
      await settled(stateless.body.data.transactionId);
      const [message] = await messagesOf(stateless.body.data.transactionId);
      expect(message.content).toBe('still here');
      expect((await other.calls()).filter((call) => call.action === 'execute' && call.workflowId === 'removable')).toHaveLength(1);
      const unknown = await api('POST', '/v1/events/trigger', { name: 'no-such-workflow', to: 'ada', payload: {}, bridgeUrl: other.url });
      expect(unknown.status).toBe(422);
    } finally {
      await other.stop();
    }
  });

  it('a bridge keyed with another secret refuses every call, and the jobs fail with that reason', async () => {
    await bridge.stop();
    bridge = await startFrameworkBridge({ secretKey: 'sk_not_this_environment_0000000000000', port: bridge.port });
    const transactionId = await trigger('scoring', { points: 5 });
    const [event] = await settled(transactionId);
    expect(event.jobs.map((job: any) => job.status)).toEqual(['failed', 'failed']);
    for (const job of event.jobs) {
      expect(details(job).join('\n')).toContain('Bridge answered 401 SignatureMismatchError');
    }
    const status = await api('GET', '/v1/bridge/status');
    // The health-check is the one action the framework does not sign-check.
    expect(status.body.data.status).toBe('ok');
    const diff = await api('POST', '/v1/bridge/diff', { bridgeUrl: bridge.url });
    expect(diff.status).toBe(400);
    expect(diff.body.message.join(' ')).toContain('SignatureMismatchError');

    // Once the app has the right key again, retrying the failed steps (as the dashboard does) completes the event.
    await bridge.stop();
    bridge = await startFrameworkBridge({ secretKey: herald.key, port: bridge.port });
    for (const job of event.jobs) {
      const retried = await api('POST', `/v1/notifications/${event._id}/jobs/${job._id}/retry`);
      expect(retried.status, retried.text).toBe(201);
      const deadline = Date.now() + 15_000;
      for (;;) {
        const [current] = (await api('GET', `/v1/notifications?transactionId=${transactionId}`)).body.data;
        const status = current.jobs.find((candidate: any) => candidate._id === job._id).status;
        if (status === 'completed') break;
        if (Date.now() > deadline) throw new Error(`retried job still ${status}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    const [message] = await messagesOf(transactionId);
    expect(message.content).toBe('Your tier is silver (5 points)');
  });
});
