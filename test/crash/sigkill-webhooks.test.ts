import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scaleoutModeRequested } from '../helpers/databases.js';
import { startHerald, type HeraldProcess } from '../helpers/herald-process.js';
import { SCALEOUT_SECRET, startScaleoutProcesses, type ScaleoutProcesses } from '../helpers/scaleout-processes.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * At-least-once across a crash: real Herald processes deliver webhooks to a slow local receiver and the process doing
 * the delivering is SIGKILLed mid-flow. Embedded: `herald start` is killed and restarted on its data directory.
 * Scaled out (HERALD_TEST_MODE=scaleout): `herald api` plus two `herald worker`s, one of them killed. Every event of
 * every accepted trigger must still arrive, verified, with its webhook-id.
 */
const SECRET = 'sk_crash_hooks_0123456789abcdef0123456789abcd';
const TRIGGERS = 120;
const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const webhookEnv = {
  HERALD_OUTBOUND_ALLOW: '127.0.0.1',
  HERALD_WEBHOOK_RELAY_MS: '20',
  HERALD_WEBHOOK_SWEEP_MS: '500',
  HERALD_WEBHOOK_OVERDUE_MS: '2000',
  HERALD_WEBHOOK_RETRY_SCHEDULE: '0,200ms,500ms,1s,2s,5s,5s,5s',
  HERALD_QUEUE_POLL_MS: '20',
  LOG_LEVEL: 'warn',
};

async function call(url: string, key: string, method: string, path: string, body?: unknown) {
  const response = await fetch(url + path, { method, headers: { authorization: `ApiKey ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, text, body: text ? JSON.parse(text) : undefined };
}

/** Sets up the endpoint and workflow, fires the triggers, and answers the accepted transaction ids. */
async function prepareAndTrigger(url: string, key: string, receiver: WebhookReceiver): Promise<string[]> {
  const endpoint = await call(url, key, 'POST', '/v2/webhooks/endpoints', { url: `${receiver.url}/crash`, eventTypes: ['message.delivered'] });
  expect(endpoint.status, endpoint.text).toBe(201);
  receiver.secrets.push(endpoint.body.data.secret);
  expect((await call(url, key, 'POST', '/v1/integrations', { providerId: 'novu', channel: 'in_app', identifier: 'inbox', active: true })).status).toBe(201);
  const workflow = await call(url, key, 'POST', '/v2/workflows', { workflowId: 'crash', name: 'crash', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'n {{ payload.n }}' } }] });
  expect(workflow.status, workflow.text).toBe(201);
  // Give every process time to hear that the environment has an endpoint (its cached answer lasts 1 s at most).
  await new Promise((resolve) => setTimeout(resolve, 1200));
  const accepted: string[] = [];
  for (let batch = 0; batch < TRIGGERS / 40; batch++) {
    const events = Array.from({ length: 40 }, (_, i) => ({ name: 'crash', to: `s-${i % 7}`, payload: { n: batch * 40 + i }, transactionId: `crash-${batch * 40 + i}` }));
    const response = await call(url, key, 'POST', '/v1/events/trigger/bulk', { events });
    expect(response.status, response.text).toBe(201);
    accepted.push(...events.map((event) => event.transactionId));
  }
  return accepted;
}

async function expectAllArrived(receiver: WebhookReceiver, accepted: string[]) {
  // One deadline for the lot (a wait for as many arrivals, then another 150 s for the missing ones, added up to more
  // than the test's budget with its start-up, and a slow run ended in "Test timed out" rather than the ids missing).
  const deadline = Date.now() + 180_000;
  for (;;) {
    const got = new Set(receiver.received.filter((w) => w.path === '/crash').map((w) => w.body?.data?.object?.transactionId));
    const missing = accepted.filter((tx) => !got.has(tx));
    if (missing.length === 0) break;
    if (Date.now() > deadline) throw new Error(`${missing.length} events never arrived, e.g. ${missing.slice(0, 5).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const all = receiver.received.filter((w) => w.path === '/crash');
  expect(all.length).toBeGreaterThanOrEqual(accepted.length);
  expect(all.every((w) => w.verifiedWith.includes(0) && w.id === w.body.id)).toBe(true);
  // A resend after the crash carries the webhook-id of the first send: one id per transaction.
  const idsByTransaction = new Map<string, Set<string>>();
  for (const w of all) {
    const tx = w.body.data.object.transactionId;
    idsByTransaction.set(tx, (idsByTransaction.get(tx) ?? new Set()).add(w.id));
  }
  expect([...idsByTransaction.values()].every((ids) => ids.size === 1)).toBe(true);
}

describe('SIGKILL during webhook delivery', () => {
  it.skipIf(scaleoutModeRequested())('embedded: herald start killed and restarted loses no event', { timeout: 400_000 }, async () => {
    const receiver = await startWebhookReceiver();
    cleanups.push(() => receiver.close());
    // A slow receiver keeps deliveries in flight when the kill comes.
    receiver.reply = () => new Promise((resolve) => setTimeout(() => resolve({ status: 204 }), 40));
    const dataDir = mkdtempSync(join(tmpdir(), 'herald-crash-hooks-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const env = { ...webhookEnv, HERALD_DATA_DIR: dataDir, HERALD_BOOTSTRAP_SECRET_KEY: SECRET };
    let herald: HeraldProcess = await startHerald(env);
    cleanups.push(() => void herald.stop('SIGKILL'));
    const accepted = await prepareAndTrigger(herald.url, SECRET, receiver);
    await receiver.waitFor((w) => w.path === '/crash', 10, 60_000);
    await herald.stop('SIGKILL');
    const before = receiver.received.filter((w) => w.path === '/crash').length;
    expect(before).toBeLessThan(accepted.length);

    herald = await startHerald({ ...env, PORT: new URL(herald.url).port });
    await expectAllArrived(receiver, accepted);
    await herald.stop();
  });

  it.skipIf(!scaleoutModeRequested())('scaled out: a worker killed mid-delivery loses no event; the other delivers', { timeout: 400_000 }, async () => {
    const receiver = await startWebhookReceiver();
    cleanups.push(() => receiver.close());
    receiver.reply = () => new Promise((resolve) => setTimeout(() => resolve({ status: 204 }), 40));
    const processes: ScaleoutProcesses = await startScaleoutProcesses({ apis: 1, workers: 2, env: webhookEnv });
    cleanups.push(() => processes.close());
    const accepted = await prepareAndTrigger(processes.apis[0].url, SCALEOUT_SECRET, receiver);
    await receiver.waitFor((w) => w.path === '/crash', 10, 60_000);
    processes.workers[0].child.kill('SIGKILL');
    await expectAllArrived(receiver, accepted);
  });
});
