import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSmtpFake, type SmtpFake } from '../fakes/smtp-fake.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createWorkflow } from './engine-helpers.js';
import { createIntegration, createSubscriber, deliveryEnv, triggerAndSettle } from './delivery/delivery-helpers.js';

/**
 * Subscriber preferences applied by the worker, end to end: PATCH a preference over HTTP, trigger, and check the
 * jobs (GET /v1/notifications/{id}), the messages (GET /v1/messages) and what the local SMTP server received.
 */
let server: TestServer;
let smtp: SmtpFake;

const steps = [
  { name: 'inbox', type: 'in_app', controlValues: { body: 'Hello {{ subscriber.firstName }}' } },
  { name: 'mail', type: 'email', controlValues: { subject: 'Mail {{ payload.n }}', body: '<p>Hello</p>' } },
];

beforeAll(async () => {
  smtp = await startSmtpFake();
  server = await startTestServer({ worker: true, env: deliveryEnv() });
  await createIntegration(server, { providerId: 'nodemailer', identifier: 'smtp', credentials: { host: '127.0.0.1', port: String(smtp.port), from: 'noreply@herald.test' } });
  await createWorkflow(server, { workflowId: 'pref-news', active: true, steps });
  await createWorkflow(server, { workflowId: 'pref-other', active: true, steps });
  await createWorkflow(server, { workflowId: 'pref-locked', active: true, critical: false, preferences: { all: { readOnly: true } }, steps });
  await createWorkflow(server, { workflowId: 'pref-critical', active: true, critical: true, steps });
});
afterAll(async () => {
  await server?.close();
  await smtp?.close();
});

let counter = 0;

/** Triggers `workflowId` for `subscriberId`; answers its jobs by step, its messages and the mails the SMTP fake got for it. */
async function deliver(workflowId: string, subscriberId: string) {
  const n = ++counter;
  const before = smtp.mails.length;
  const delivery = await triggerAndSettle(server, { name: workflowId, to: subscriberId, payload: { n } });
  const [inApp, email] = delivery.event.jobs;
  const mails = smtp.mails.slice(before).filter((mail) => mail.parsed.subject === `Mail ${n}`);
  return { inApp, email, messages: delivery.messages, channels: delivery.messages.map((m: any) => m.channel).sort(), mails };
}

async function patchPreferences(subscriberId: string, body: unknown): Promise<void> {
  const response = await server.request('PATCH', `/v2/subscribers/${subscriberId}/preferences`, { body });
  expect(response.status, response.text).toBe(200);
}

const lastDetail = (job: any) => job.executionDetails.at(-1);

describe('preferences applied before each channel step', () => {
  it('email off for one workflow: no email (skipped job naming the level), in-app still arrives; on again: the email arrives', async () => {
    await createSubscriber(server, { subscriberId: 'e2e-workflow', firstName: 'Ann', email: 'ann@example.com' });
    await patchPreferences('e2e-workflow', { workflowId: 'pref-news', channels: { email: false } });

    const off = await deliver('pref-news', 'e2e-workflow');
    expect(off.inApp.status).toBe('completed');
    expect(off.email.status).toBe('skipped');
    expect(lastDetail(off.email)).toMatchObject({ status: 'Success', detail: "Step skipped: the email channel is turned off in the subscriber's preferences for this workflow" });
    expect(off.channels).toEqual(['in_app']);
    expect(off.mails).toHaveLength(0);

    // Only that workflow: another one still emails.
    const other = await deliver('pref-other', 'e2e-workflow');
    expect(other.email.status).toBe('completed');
    expect(other.mails).toHaveLength(1);

    await patchPreferences('e2e-workflow', { workflowId: 'pref-news', channels: { email: true } });
    const on = await deliver('pref-news', 'e2e-workflow');
    expect(on.email.status).toBe('completed');
    expect(on.channels).toEqual(['email', 'in_app']);
    expect(on.mails).toHaveLength(1);
    expect(on.mails[0].envelope.to).toEqual(['ann@example.com']);
  });

  it('email off globally: no email for any workflow; on again: emails arrive', async () => {
    await createSubscriber(server, { subscriberId: 'e2e-global', firstName: 'Bea', email: 'bea@example.com' });
    await patchPreferences('e2e-global', { channels: { email: false } });
    for (const workflowId of ['pref-news', 'pref-other']) {
      const off = await deliver(workflowId, 'e2e-global');
      expect(off.email.status).toBe('skipped');
      expect(lastDetail(off.email).detail).toBe("Step skipped: the email channel is turned off in the subscriber's global preferences");
      expect(off.channels).toEqual(['in_app']);
      expect(off.mails).toHaveLength(0);
    }
    await patchPreferences('e2e-global', { channels: { email: true } });
    const on = await deliver('pref-news', 'e2e-global');
    expect(on.email.status).toBe('completed');
    expect(on.mails).toHaveLength(1);
  });

  it('in-app off globally skips the in-app step (inline first step too) while email is sent', async () => {
    await createSubscriber(server, { subscriberId: 'e2e-inapp', firstName: 'Cy', email: 'cy@example.com' });
    await patchPreferences('e2e-inapp', { channels: { in_app: false } });
    const result = await deliver('pref-news', 'e2e-inapp');
    expect(result.inApp.status).toBe('skipped');
    expect(lastDetail(result.inApp).detail).toBe("Step skipped: the in_app channel is turned off in the subscriber's global preferences");
    expect(result.channels).toEqual(['email']);
    expect(result.mails).toHaveLength(1);
  });

  it('a read-only workflow is sent despite the opt-out', async () => {
    await createSubscriber(server, { subscriberId: 'e2e-locked', firstName: 'Di', email: 'di@example.com' });
    await patchPreferences('e2e-locked', { channels: { email: false, in_app: false } });
    const result = await deliver('pref-locked', 'e2e-locked');
    expect(result.email.status).toBe('completed');
    expect(result.channels).toEqual(['email', 'in_app']);
    expect(result.mails).toHaveLength(1);
    // The same opt-out holds for an ordinary workflow.
    const ordinary = await deliver('pref-news', 'e2e-locked');
    expect(ordinary.channels).toEqual([]);
    expect(ordinary.mails).toHaveLength(0);
  });

  it('a critical workflow is sent despite the opt-out, and despite everything switched off', async () => {
    await createSubscriber(server, { subscriberId: 'e2e-critical', firstName: 'Ed', email: 'ed@example.com' });
    const off = await server.request('PATCH', '/v1/subscribers/e2e-critical/preferences', { body: { enabled: false, preferences: [{ type: 'email', enabled: false }] } });
    expect(off.status, off.text).toBe(200);
    const result = await deliver('pref-critical', 'e2e-critical');
    expect(result.inApp.status).toBe('completed');
    expect(result.email.status).toBe('completed');
    expect(result.mails).toHaveLength(1);
    const ordinary = await deliver('pref-other', 'e2e-critical');
    expect(ordinary.channels).toEqual([]);
    expect(ordinary.mails).toHaveLength(0);
  });

  it('v1 updatePreference with enabled: false switches the whole workflow off', async () => {
    await createSubscriber(server, { subscriberId: 'e2e-v1', firstName: 'Flo', email: 'flo@example.com' });
    const response = await server.request('PATCH', '/v1/subscribers/e2e-v1/preferences/pref-news', { body: { enabled: false } });
    expect(response.status, response.text).toBe(200);
    const result = await deliver('pref-news', 'e2e-v1');
    expect([result.inApp.status, result.email.status]).toEqual(['skipped', 'skipped']);
    expect(lastDetail(result.email).detail).toBe("Step skipped: the email channel is turned off in the subscriber's preferences for this workflow");
    expect(result.mails).toHaveLength(0);
  });
});

describe('cost', () => {
  it('one preference read per channel step (the global and workflow rows together); none for a critical workflow', async () => {
    await createSubscriber(server, { subscriberId: 'e2e-cost', firstName: 'Gus', email: 'gus@example.com' });
    const preferences = server.deps.store.preferences;
    const reads = vi.spyOn(preferences, 'getForDelivery');
    const lists = vi.spyOn(preferences, 'listForSubscriber');
    try {
      const sent = await deliver('pref-news', 'e2e-cost');
      expect(sent.channels).toEqual(['email', 'in_app']);
      expect(reads).toHaveBeenCalledTimes(2);
      expect(lists).not.toHaveBeenCalled();
      reads.mockClear();
      await deliver('pref-critical', 'e2e-cost');
      expect(reads).not.toHaveBeenCalled();
    } finally {
      reads.mockRestore();
      lists.mockRestore();
    }
  });
});
