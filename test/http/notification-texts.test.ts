import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import type { NotificationEvent } from '../../src/domain/types.js';
import { serializeNotificationEvent } from '../../src/http/notification-page-serializer.js';
import { withPresentableJobs } from '../../src/usecases/notifications/presentable-jobs.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createWorkflow, trigger } from '../worker/engine-helpers.js';

/**
 * Kept list texts of GET /v1/notifications (migrations 0029, 0030): the worker keeps an event's list text when its
 * last step ends, a page writes it as it is, and after any later write to the event, its jobs or their details the
 * page no longer uses it. SQLite: the text is kept in the transaction that reads the event and dropped by triggers.
 * PostgreSQL (scaled out): the worker keeps the texts of the events ending within a window, each with the print of the
 * rows it was written from, and a page uses a text only while that print matches the rows stored now; the writes
 * below run through the store and by hand-written SQL, as another process would make them.
 */
let server: TestServer;
let sqlite: boolean;
const PAGE = '/v1/notifications?limit=50&before=2100-01-01T00:00:00.000Z';

beforeAll(async () => {
  server = await startTestServer({ worker: true, env: { HERALD_QUEUE_POLL_MS: '20' } });
  sqlite = !server.config.databaseUrl;
  const inbox = (name: string) => ({ name, type: 'in_app', controlValues: { subject: `Hi {{ subscriber.firstName }} (${name})`, body: 'Order {{ payload.orderId }}' } });
  await createWorkflow(server, { workflowId: 'one-step', tags: ['a', 'b'], severity: 'high', steps: [inbox('inbox')] });
  await createWorkflow(server, { workflowId: 'two-steps', steps: [inbox('first'), inbox('second')] });
  await createWorkflow(server, { workflowId: 'waits', steps: [{ name: 'wait', type: 'delay', controlValues: { type: 'regular', amount: 1, unit: 'hours' } }, inbox('after')] });
  for (const subscriberId of ['ann', 'bob', 'cy']) {
    await server.request('POST', '/v2/subscribers', { body: { subscriberId, firstName: subscriberId.toUpperCase(), email: `${subscriberId}@example.com` } });
  }
  for (const name of ['one-step', 'two-steps', 'waits']) {
    const response = await trigger(server, { name, to: ['ann', 'bob', 'cy'], payload: { orderId: `o-${name}` }, context: { tenant: 'acme' } });
    expect(response.status, response.text).toBe(201);
  }
  await server.waitForIdle({ ignoreDelayed: true });
});
afterAll(async () => {
  await server?.close();
});

/** The kept texts a page uses now (SQLite: every row of the table; PostgreSQL: those whose print matches). */
async function keptTexts(): Promise<Map<string, string>> {
  const page = await server.deps.store.notifications.listWithTexts(server.devEnvironmentId, { page: 0, limit: 100, before: '2100-01-01T00:00:00.000Z' });
  const kept = new Map<string, string>();
  for (const entry of page.data) if ('keptText' in entry) kept.set(entry._id, entry.keptText);
  if (sqlite) {
    const rows = await server.container.db.selectFrom('notification_texts').select(['notification_id', 'text']).execute();
    expect(new Map(rows.map((row) => [row.notification_id, row.text]))).toEqual(kept);
  }
  return kept;
}

/** Until the texts of these events are kept (PostgreSQL keeps them at the end of a window, the job not waiting). */
async function untilKept(ids: string[]): Promise<Map<string, string>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const kept = await keptTexts();
    if (ids.every((id) => kept.has(id)) || Date.now() > deadline) return kept;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function pageText(): Promise<string> {
  const response = await server.request('GET', PAGE);
  expect(response.status, response.text).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
  return response.text;
}

/** The event as a page assembles it now (jobs and details read), written as its list entry. */
async function assembled(id: string): Promise<string> {
  const event = (await server.deps.store.notifications.get(server.devEnvironmentId, id)) as NotificationEvent;
  return serializeNotificationEvent(withPresentableJobs(event));
}

/** Every kept text is the text of the event as stored now. */
async function expectKeptTextsCurrent(): Promise<void> {
  for (const [id, text] of await keptTexts()) expect(text, id).toBe(await assembled(id));
}

async function keep(id: string): Promise<void> {
  await server.deps.store.notifications.keepText(server.devEnvironmentId, id, (event) => serializeNotificationEvent(withPresentableJobs(event)));
}

async function eventsByWorkflow(): Promise<Map<string, any[]>> {
  const events = JSON.parse(await pageText()).data as any[];
  const byWorkflow = new Map<string, any[]>();
  for (const event of events) byWorkflow.set(event.template.triggers[0].identifier, [...(byWorkflow.get(event.template.triggers[0].identifier) ?? []), event]);
  return byWorkflow;
}

describe('kept list texts of GET /v1/notifications', () => {
  it('keeps the text of each event whose jobs all ended, and a page with them is byte for byte the assembled page', async () => {
    const byWorkflow = await eventsByWorkflow();
    const ended = [...(byWorkflow.get('one-step') ?? []), ...(byWorkflow.get('two-steps') ?? [])];
    expect(ended).toHaveLength(6);
    for (const event of ended) for (const job of event.jobs) expect(job.status).toBe('completed');
    const waiting = byWorkflow.get('waits') ?? [];
    expect(waiting).toHaveLength(3);

    const kept = await untilKept(ended.map((event) => event._id));
    expect([...kept.keys()].sort()).toEqual(ended.map((event) => event._id).sort());
    await expectKeptTextsCurrent();

    const withTexts = await pageText();
    await server.container.db.deleteFrom('notification_texts').execute();
    const withoutTexts = await pageText();
    expect(withTexts).toBe(withoutTexts);
    // Shallow, filtered and deep-offset pages go through the same writer.
    for (const query of ['limit=2&page=1', 'limit=1&page=4', 'channels=in_app&limit=5', 'page=5000&limit=1']) {
      await Promise.all(ended.map((event) => keep(event._id)));
      expect((await keptTexts()).size, query).toBe(ended.length);
      const kept = (await server.request('GET', `/v1/notifications?${query}`)).text;
      await server.container.db.deleteFrom('notification_texts').execute();
      expect(kept, query).toBe((await server.request('GET', `/v1/notifications?${query}`)).text);
    }
  });

  it('drops a kept text on any later write to the event, its jobs or their execution details', async () => {
    const [event] = (await eventsByWorkflow()).get('one-step')!;
    const store = server.deps.store;
    const jobs = await store.jobs.listForNotification(server.devEnvironmentId, event._id);
    const writes: Array<[string, () => Promise<unknown>]> = [
      ['a delivery report adds a detail', () => store.jobs.addDetail(jobs[0]!, { _id: newId(), createdAt: new Date().toISOString(), status: 'Success', detail: 'Delivered (report)', isRetry: false, isTest: false, source: 'Webhook', raw: null })],
      ['a job is saved', () => store.jobs.save({ ...jobs[0]!, updatedAt: new Date(Date.now() + 1000).toISOString() })],
      ['the event is saved', async () => store.notifications.save({ ...(await store.notifications.get(server.devEnvironmentId, event._id))!, updatedAt: new Date(Date.now() + 2000).toISOString() })],
    ];
    for (const [write, run] of writes) {
      await keep(event._id);
      const before = await pageText();
      expect((await keptTexts()).has(event._id), write).toBe(true);
      await run();
      expect((await keptTexts()).has(event._id), write).toBe(false);
      const after = await pageText();
      expect(after, write).not.toBe(before);
      expect(JSON.parse(after).data.find((listed: any) => listed._id === event._id), write).toEqual(JSON.parse(await assembled(event._id)));
    }
    const detailTexts = JSON.parse(await assembled(event._id)).jobs[0].executionDetails.map((detail: any) => detail.detail);
    expect(detailTexts).toContain('Delivered (report)');

    await keep(event._id);
    expect((await keptTexts()).has(event._id)).toBe(true);
    await server.container.db.deleteFrom('execution_details').where('notification_id', '=', event._id).execute();
    expect((await keptTexts()).has(event._id)).toBe(false);
    expect(JSON.parse(await pageText()).data.find((listed: any) => listed._id === event._id)).toEqual(JSON.parse(await assembled(event._id)));
    // A job's row rewritten with the same values by hand-written SQL (another process, no Herald code) is a write too.
    await keep(event._id);
    expect((await keptTexts()).has(event._id)).toBe(true);
    await server.container.db.updateTable('jobs').set((eb) => ({ status: eb.ref('status') })).where('notification_id', '=', event._id).execute();
    expect((await keptTexts()).has(event._id)).toBe(false);
    await keep(event._id);
    await server.container.db.deleteFrom('notifications').where('id', '=', event._id).execute();
    expect((await keptTexts()).has(event._id)).toBe(false);
  });

  it('keeps no text for an event with a job still to run, and a write racing the keeping leaves no stale text', async () => {
    const store = server.deps.store;
    for (const event of (await eventsByWorkflow()).get('waits')!) {
      await server.deps.store.notifications.keepText(server.devEnvironmentId, event._id, () => undefined);
      expect((await keptTexts()).has(event._id)).toBe(false);
    }
    const ended = (await eventsByWorkflow()).get('two-steps')!;
    for (const event of ended) {
      const [job] = await store.jobs.listForNotification(server.devEnvironmentId, event._id);
      const detail = { _id: newId(), createdAt: new Date().toISOString(), status: 'Success' as const, detail: 'Seen', isRetry: false, isTest: false, source: 'Webhook' as const, raw: null };
      // Started together: whichever runs first, the text kept (if any) is the event as stored after both.
      await Promise.all([keep(event._id), store.jobs.addDetail(job!, detail), keep(event._id)]);
      await expectKeptTextsCurrent();
    }
  });

  it('PostgreSQL: a text kept from rows read before a write committed is never used (its print is the old rows\')', async () => {
    if (sqlite) return;
    const [event] = (await eventsByWorkflow()).get('two-steps')!;
    const store = server.deps.store;
    const jobs = await store.jobs.listForNotification(server.devEnvironmentId, event._id);
    const writes: Array<[string, () => Promise<unknown>]> = [
      ['a detail added', () => store.jobs.addDetail(jobs[1]!, { _id: newId(), createdAt: new Date().toISOString(), status: 'Success', detail: 'Late', isRetry: false, isTest: false, source: 'Webhook', raw: null })],
      ['a job rewritten as it was', () => server.container.db.updateTable('jobs').set((eb) => ({ status: eb.ref('status') })).where('id', '=', jobs[0]!._id).execute()],
      ['a detail deleted', () => server.container.db.deleteFrom('execution_details').where('job_id', '=', jobs[0]!._id).execute()],
      ['the event rewritten as it was', () => server.container.db.updateTable('notifications').set((eb) => ({ updated_at: eb.ref('updated_at') })).where('id', '=', event._id).execute()],
    ];
    for (const [write, run] of writes) {
      await keep(event._id);
      const { print } = await server.container.db.selectFrom('notification_texts').select('print').where('notification_id', '=', event._id).executeTakeFirstOrThrow();
      expect(print, write).toMatch(/^\d+\/\d+,\d+\/[\d,]*$/);
      await run();
      // The keeping read the rows before the write and inserts its text after it: the print it carries is the old rows'.
      await server.container.db.updateTable('notification_texts').set({ text: '{"stale":true}', print }).where('notification_id', '=', event._id).execute();
      expect((await keptTexts()).has(event._id), write).toBe(false);
      const listed = JSON.parse(await pageText()).data.find((entry: any) => entry._id === event._id);
      expect(listed, write).toEqual(JSON.parse(await assembled(event._id)));
    }
  });

  it("keeps the text of an event whose only step ran inside its trigger's job (one subscriber: its writes held and written together)", async () => {
    const response = await trigger(server, { name: 'one-step', to: 'dee', payload: { orderId: 'o-alone' } });
    expect(response.status, response.text).toBe(201);
    await server.waitForIdle({ ignoreDelayed: true });
    const [event] = JSON.parse((await server.request('GET', `/v1/notifications?transactionId=${response.body.data.transactionId}`)).text).data;
    expect(event.jobs.map((job: any) => job.status)).toEqual(['completed']);
    const kept = await untilKept([event._id]);
    expect(kept.get(event._id)).toBe(await assembled(event._id));
  });
});
