import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { newId } from '../../../src/domain/ids.js';
import type { Message } from '../../../src/domain/types.js';
import type { EnqueueOptions } from '../../../src/queue/ports.js';
import type { InboxAudience, RealtimeNotifier } from '../../../src/realtime/ports.js';
import type { TriggerRecord } from '../../../src/store/ports.js';
import type { Deps } from '../../../src/usecases/deps.js';
import { processTrigger } from '../../../src/usecases/engine/process-trigger.js';
import { runJob } from '../../../src/usecases/engine/run-job.js';
import { createTemplateRenderer } from '../../../src/domain/templates.js';
import { emptyCustomStepRegistry } from '../../../src/usecases/engine/step-context.js';
import { createDispatcher, stepHandlers } from '../../../src/worker/dispatch.js';
import { noopMetrics } from '../../../src/observability/noop.js';
import type { Metrics } from '../../../src/observability/ports.js';
import type { Store } from '../../../src/store/ports.js';
import { buildNotificationEvent, buildSubscriber, insertNotificationEvent, insertSubscriber, scopeOf, type Scope } from '../../helpers/factories.js';
import { startTestServer, type TestServer } from '../../helpers/test-server.js';
import { createWorkflow, detailTexts, eventsOf, messagesOf } from '../../worker/engine-helpers.js';
import { serializeNotificationEvent } from '../../../src/http/notification-page-serializer.js';
import { withPresentableJobs } from '../../../src/usecases/notifications/presentable-jobs.js';

/**
 * A trigger's first step run with the trigger (the dispatcher's runFirstStep): its event, its jobs and what the step
 * records are written together (Store.batch: on PostgreSQL one statement, on SQLite one synchronous block), and what
 * announces them (realtime, queue adds) waits until they are written. Runs against SQLite and, with HERALD_TEST_MODE=scaleout, PostgreSQL.
 */
describe('processTrigger: the first step written with its event', () => {
  let server: TestServer;
  let scope: Scope;
  let counter = 0;
  const renderer = createTemplateRenderer();

  beforeAll(async () => {
    server = await startTestServer();
    scope = await scopeOf(server.deps.store, server.devEnvironmentId);
    await server.request('POST', '/v1/integrations', { body: { providerId: 'novu', channel: 'in_app', active: true } });
    await createWorkflow(server, { workflowId: 'held-one', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Hi {{subscriber.subscriberId}}' } }] });
    await createWorkflow(server, {
      workflowId: 'held-two',
      steps: [
        { name: 'inbox', type: 'in_app', controlValues: { body: 'First' } },
        { name: 'wait', type: 'delay', controlValues: { amount: 1, unit: 'hours', type: 'regular' } },
      ],
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  async function acceptedTrigger(workflowId: string, to: string, request: Partial<TriggerRecord['request']> = {}): Promise<TriggerRecord> {
    const now = new Date().toISOString();
    counter += 1;
    const record: TriggerRecord = {
      _id: `6a1b2c3d${counter.toString(16).padStart(6, '0')}0f0e0d0c0b`,
      environmentId: scope.environmentId,
      organizationId: scope.organizationId,
      transactionId: `held-${workflowId}-${counter}`,
      workflowId,
      request: { name: workflowId, to, payload: {}, ...request },
      state: 'accepted',
      createdAt: now,
      updatedAt: now,
    };
    expect((await server.deps.store.triggers.create(record)).created).toBe(true);
    return record;
  }

  /** Deps whose realtime and queue record what they were asked, and whether the message was readable then. */
  function observedDeps() {
    const calls: string[] = [];
    const checks: Array<Promise<void>> = [];
    const realtime: RealtimeNotifier = {
      messageDelivered: (_audience: InboxAudience, message: Message) => {
        calls.push(`delivered ${message._id}`);
        checks.push(server.deps.store.messages.get(message._environmentId, message._id).then((stored) => void calls.push(stored ? 'stored' : 'not stored')));
      },
      messagesChanged: () => void calls.push('changed'),
      subscriberChanged: () => void calls.push('subscriber'),
    };
    const enqueued: Array<{ name: string; options?: EnqueueOptions; visible: boolean }> = [];
    const queue = Object.create(server.deps.queue, {
      enqueue: {
        value: async (name: string, payload: { environmentId: string; jobId: string }, options?: EnqueueOptions) => {
          const job = await server.deps.store.jobs.get(payload.environmentId, payload.jobId);
          enqueued.push({ name, options, visible: job?.status === 'queued' || job?.status === 'delayed' || job?.status === 'completed' });
        },
      },
    });
    const deps: Deps = { ...server.deps, realtime, queue };
    return { deps, calls, checks, enqueued };
  }

  /** As the dispatcher runs a self-contained first step. */
  const runFirstStep = async (followUp: { environmentId: string; jobId: string }, loaded: any, stepDeps: Deps) => {
    await runJob(stepDeps, { environmentId: followUp.environmentId, jobId: followUp.jobId }, {
      handlers: stepHandlers,
      customSteps: emptyCustomStepRegistry,
      renderer,
      attempt: 1,
      maxAttempts: 3,
      loaded,
    });
    return true;
  };

  it('writes the event with its step completed, the message, exact counts and the processed trigger; realtime after the write', async () => {
    const subscriber = await insertSubscriber(server.deps.store, scope);
    const trigger = await acceptedTrigger('held-one', subscriber.subscriberId);
    const { deps, calls, checks, enqueued } = observedDeps();
    const hour = new Date().toISOString().slice(0, 13);
    const range = { fromHour: hour, toHour: '2100-01-01T00', bucket: 'hour' as const };
    const sentBefore = (await server.deps.store.overview.read(scope.environmentId, range)).totals.filter((row) => row.outcome === 'sent').reduce((sum, row) => sum + row.count, 0);
    const countBefore = (await server.request('GET', '/v1/messages?channel=in_app&limit=1')).body.totalCount;

    await processTrigger(deps, { environmentId: trigger.environmentId, triggerId: trigger._id }, { runFirstStep });
    await Promise.all(checks);

    const [event] = await eventsOf(server, trigger.transactionId);
    expect(event.jobs.map((job: any) => job.status)).toEqual(['completed']);
    expect(detailTexts(event.jobs[0])).toEqual(['Pending: Step created', 'Queued: Step queued', 'Success: Message sent to the subscriber inbox']);
    const messages = await messagesOf(server, trigger.transactionId);
    expect(messages.map((message) => message.content)).toEqual([`Hi ${subscriber.subscriberId}`]);
    expect((await server.deps.store.triggers.get(trigger.environmentId, trigger._id))?.state).toBe('processed');
    expect(calls).toEqual([`delivered ${messages[0]._id}`, 'stored']);
    expect(enqueued).toEqual([]);
    const sentAfter = (await server.deps.store.overview.read(scope.environmentId, range)).totals.filter((row) => row.outcome === 'sent').reduce((sum, row) => sum + row.count, 0);
    expect(sentAfter - sentBefore).toBe(1);
    expect((await server.request('GET', '/v1/messages?channel=in_app&limit=1')).body.totalCount).toBe(countBefore + 1);
  });

  it('queues the next step only once it is written, then marks the trigger processed', async () => {
    const subscriber = await insertSubscriber(server.deps.store, scope);
    const trigger = await acceptedTrigger('held-two', subscriber.subscriberId);
    const { deps, enqueued } = observedDeps();

    await processTrigger(deps, { environmentId: trigger.environmentId, triggerId: trigger._id }, { runFirstStep });

    const [event] = await eventsOf(server, trigger.transactionId);
    expect(event.jobs.map((job: any) => job.status)).toEqual(['completed', 'queued']);
    expect(enqueued.map((add) => [add.name, add.visible])).toEqual([['run-step', true]]);
    expect((await server.deps.store.triggers.get(trigger.environmentId, trigger._id))?.state).toBe('processed');
  });

  it('makes one event and one message when two runs of the same trigger race, and a rerun after them adds nothing', async () => {
    const subscriber = await insertSubscriber(server.deps.store, scope);
    const trigger = await acceptedTrigger('held-one', subscriber.subscriberId);
    const countBefore = (await server.request('GET', '/v1/messages?channel=in_app&limit=1')).body.totalCount;
    const payload = { environmentId: trigger.environmentId, triggerId: trigger._id };
    // One may fail on the event's id (the other wrote it first): its queue job would run again.
    await Promise.allSettled([processTrigger(server.deps, payload, { runFirstStep }), processTrigger(server.deps, payload, { runFirstStep })]);
    await server.deps.store.triggers.setState(trigger.environmentId, trigger._id, 'accepted');
    await processTrigger(server.deps, payload, { runFirstStep });

    const events = await eventsOf(server, trigger.transactionId);
    expect(events).toHaveLength(1);
    expect(events[0].jobs.map((job: any) => job.status)).toEqual(['completed']);
    expect(await messagesOf(server, trigger.transactionId)).toHaveLength(1);
    expect((await server.request('GET', '/v1/messages?channel=in_app&limit=1')).body.totalCount).toBe(countBefore + 1);
    expect((await server.deps.store.triggers.get(trigger.environmentId, trigger._id))?.state).toBe('processed');
  });

  it('counts the delivery and the step run once when the trigger job is retried after its write failed', async () => {
    const subscriber = await insertSubscriber(server.deps.store, scope);
    const trigger = await acceptedTrigger('held-one', subscriber.subscriberId);
    const counted: string[] = [];
    const metrics: Metrics = {
      ...noopMetrics,
      delivery: (channel, providerId, status) => void counted.push(`delivery ${channel} ${providerId} ${status}`),
      jobFinished: (type, status) => void counted.push(`job ${type} ${status}`),
    };
    // The first job's batches fail at their write (both: processTrigger tries once more itself, in case the
    // subscriber it was creating had been created meanwhile): nothing is written (the flush never runs).
    let failWrites = 2;
    const store: Store = Object.create(server.deps.store, {
      batch: {
        value: <T>(work: (store: Store) => Promise<T>) =>
          server.deps.store.batch(async (batchStore) => {
            const result = await work(batchStore);
            if (failWrites > 0) {
              failWrites -= 1;
              throw new Error('write failed');
            }
            return result;
          }),
      },
    });
    const dispatch = createDispatcher({ ...server.deps, store, metrics });
    const job = (attempt: number) => ({ id: `held-retry-${attempt}`, name: 'process-trigger', payload: { environmentId: trigger.environmentId, triggerId: trigger._id }, attempt, maxAttempts: 3 });

    await expect(dispatch(job(1))).rejects.toThrow('write failed');
    await dispatch(job(2));

    expect(counted.sort()).toEqual(['delivery in_app novu sent', 'job in_app completed', 'job process-trigger completed', 'job process-trigger retry']);
    expect(await messagesOf(server, trigger.transactionId)).toHaveLength(1);
  });

  it('creates a subscriber the trigger names for the first time, with its event, in the same write', async () => {
    counter += 1;
    const subscriberId = `held-new-${counter}`;
    const trigger = await acceptedTrigger('held-one', subscriberId);

    await processTrigger(server.deps, { environmentId: trigger.environmentId, triggerId: trigger._id }, { runFirstStep });

    const created = await server.deps.store.subscribers.findBySubscriberId(scope.environmentId, subscriberId);
    expect(created).toBeDefined();
    const [event] = await eventsOf(server, trigger.transactionId);
    expect(event._subscriberId).toBe(created!._id);
    expect(event.jobs.map((job: any) => job.status)).toEqual(['completed']);
    const messages = await messagesOf(server, trigger.transactionId);
    expect(messages.map((message) => [message._subscriberId, message.content])).toEqual([[created!._id, `Hi ${subscriberId}`]]);
    expect((await server.deps.store.triggers.get(trigger.environmentId, trigger._id))?.state).toBe('processed');
  });

  it('delivers to the subscriber another trigger created meanwhile under the same subscriberId, and creates no second one', async () => {
    const existing = await insertSubscriber(server.deps.store, scope);
    const trigger = await acceptedTrigger('held-one', existing.subscriberId);
    // The first look-up misses it, as when the other trigger's write lands between this run's read and its write.
    let lookups = 0;
    const subscribers = Object.create(server.deps.store.subscribers, {
      findBySubscriberId: {
        value: async (environmentId: string, subscriberId: string) =>
          lookups++ === 0 ? undefined : server.deps.store.subscribers.findBySubscriberId(environmentId, subscriberId),
      },
    });
    const store = Object.create(server.deps.store, { subscribers: { value: subscribers } });

    await processTrigger({ ...server.deps, store }, { environmentId: trigger.environmentId, triggerId: trigger._id }, { runFirstStep });

    expect(lookups).toBe(2);
    const [event] = await eventsOf(server, trigger.transactionId);
    expect(event._subscriberId).toBe(existing._id);
    expect((await messagesOf(server, trigger.transactionId)).map((message) => message._subscriberId)).toEqual([existing._id]);
    const page = await server.request('GET', `/v2/subscribers?subscriberId=${encodeURIComponent(existing.subscriberId)}&limit=10`);
    expect(page.body.data.map((subscriber: any) => subscriber._id)).toEqual([existing._id]);
  });

  it('SQLite: writes the first step as one block (one savepoint, one commit, the job inserted completed, no update)', async (context) => {
    if (server.deps.config.databaseUrl) return context.skip();
    const subscriber = await insertSubscriber(server.deps.store, scope);
    // The workflow's snapshot is written once per process, before the first message that references it (migration
    // 0031): one delivery first, so the counted one is an ordinary one whichever tests ran before.
    const warmUp = await acceptedTrigger('held-one', subscriber.subscriberId);
    await processTrigger(server.deps, { environmentId: warmUp.environmentId, triggerId: warmUp._id }, { runFirstStep });
    const trigger = await acceptedTrigger('held-one', subscriber.subscriberId);
    // Every statement the process runs meanwhile, as better-sqlite3 sees it (the bench's round-trip counter does the same).
    const statements: string[] = [];
    const statementPrototype = Object.getPrototypeOf(new BetterSqlite3(':memory:').prepare('select 1'));
    const originals = { run: statementPrototype.run, all: statementPrototype.all, get: statementPrototype.get, exec: BetterSqlite3.prototype.exec };
    for (const name of ['run', 'all', 'get'] as const) {
      statementPrototype[name] = function (this: { source: string }, ...args: unknown[]) {
        statements.push(this.source);
        return originals[name].apply(this, args);
      };
    }
    BetterSqlite3.prototype.exec = function (this: BetterSqlite3.Database, source: string) {
      statements.push(source);
      return originals.exec.call(this, source);
    };
    try {
      await processTrigger(server.deps, { environmentId: trigger.environmentId, triggerId: trigger._id }, { runFirstStep });
    } finally {
      Object.assign(statementPrototype, { run: originals.run, all: originals.all, get: originals.get });
      BetterSqlite3.prototype.exec = originals.exec;
    }
    const kinds = statements.map((text) => text.replace(/\s+/g, ' ').match(/^(savepoint|release|begin|commit|insert into "\w+"|update "\w+"|select|delete from "\w+")/)?.[0] ?? text);
    // 17 (2026-11-26, session 14): reads of the trigger, the workflow (this server has no workflow cache), the
    // subscriber, the event id's owners and the preferences, then begin, savepoint, the event, its job (completed), its
    // three execution details (one insert), the two overview counts, the message, its counters, the trigger's state,
    // release, commit. Before: 24 writes and execs (four commits, three savepoint pairs, the job inserted queued then
    // updated, its details in two inserts, the trigger's state in a commit of its own).
    expect(kinds.filter((kind) => kind !== 'select')).toEqual([
      'begin', 'savepoint', 'insert into "notifications"', 'insert into "jobs"', 'insert into "execution_details"',
      'insert into "messages"',
      'update "triggers"',
      // The event's kept list text, rendered from the held records (2026-11-26, session 16): before, it was read back
      // once written (three selects) and kept in a transaction of its own (begin, savepoint, insert, release, commit).
      'insert into "notification_texts"',
      'release',
      // The counts (overview, the messages list's totals) summed over the commit's blocks, written just before it
      // (2026-11-27, session 18): before, each block upserted the same hot rows inside the savepoint.
      'insert into "overview_counts"', 'insert into "overview_latency"', 'insert into "message_counters"',
      'commit',
    ]);
    expect(kinds.filter((kind) => kind === 'select').length).toBeLessThanOrEqual(5);
    expect((await eventsOf(server, trigger.transactionId))[0].jobs.map((job: any) => job.status)).toEqual(['completed']);
  });

  it('SQLite: the counts of the deliveries of one commit are summed and written once, exact', async (context) => {
    if (server.deps.config.databaseUrl) return context.skip();
    const subscribers = [await insertSubscriber(server.deps.store, scope), await insertSubscriber(server.deps.store, scope), await insertSubscriber(server.deps.store, scope)];
    const triggers = await Promise.all(subscribers.map((subscriber) => acceptedTrigger('held-one', subscriber.subscriberId)));
    const hour = new Date().toISOString().slice(0, 13);
    const range = { fromHour: hour, toHour: '2100-01-01T00', bucket: 'hour' as const };
    const sent = async () => (await server.deps.store.overview.read(scope.environmentId, range)).totals.filter((row) => row.outcome === 'sent').reduce((sum, row) => sum + row.count, 0);
    const total = async (query: string) => (await server.request('GET', `/v1/messages?${query}&limit=1`)).body.totalCount as number;
    const before = { sent: await sent(), inApp: await total('channel=in_app'), all: await total('page=0'), first: await total(`subscriberId=${subscribers[0]!.subscriberId}`) };
    const upserts: string[] = [];
    const statementPrototype = Object.getPrototypeOf(new BetterSqlite3(':memory:').prepare('select 1'));
    const run = statementPrototype.run;
    statementPrototype.run = function (this: { source: string }, ...args: unknown[]) {
      if (/^insert into "(message_counters|overview_counts|overview_latency)"/.test(this.source)) upserts.push(this.source.match(/^insert into "(\w+)"/)![1]!);
      return run.apply(this, args);
    };
    try {
      // Started together, the three first steps write their blocks in one event-loop turn: one commit.
      await Promise.all(triggers.map((trigger) => processTrigger(server.deps, { environmentId: trigger.environmentId, triggerId: trigger._id }, { runFirstStep })));
    } finally {
      statementPrototype.run = run;
    }
    expect(upserts.sort()).toEqual(['message_counters', 'overview_counts', 'overview_latency']);
    expect(await sent()).toBe(before.sent + 3);
    expect(await total('channel=in_app')).toBe(before.inApp + 3);
    expect(await total('page=0')).toBe(before.all + 3);
    expect(await total(`subscriberId=${subscribers[0]!.subscriberId}`)).toBe(before.first + 1);
  });

  it('PostgreSQL: first steps written while others are in flight share statements, the counts exact and each kept text used', async (context) => {
    if (!server.deps.config.databaseUrl) return context.skip();
    const subscribers = await Promise.all(Array.from({ length: 12 }, () => insertSubscriber(server.deps.store, scope)));
    const triggers = await Promise.all(subscribers.map((subscriber) => acceptedTrigger('held-one', subscriber.subscriberId)));
    const hour = new Date().toISOString().slice(0, 13);
    const range = { fromHour: hour, toHour: '2100-01-01T00', bucket: 'hour' as const };
    const sent = async () => (await server.deps.store.overview.read(scope.environmentId, range)).totals.filter((row) => row.outcome === 'sent').reduce((sum, row) => sum + row.count, 0);
    const total = async (query: string) => (await server.request('GET', `/v1/messages?${query}&limit=1`)).body.totalCount as number;
    const before = { sent: await sent(), inApp: await total('channel=in_app'), first: await total(`subscriberId=${subscribers[0]!.subscriberId}`) };
    await Promise.all(triggers.map((trigger) => processTrigger(server.deps, { environmentId: trigger.environmentId, triggerId: trigger._id }, { runFirstStep })));
    const events = (await Promise.all(triggers.map((trigger) => eventsOf(server, trigger.transactionId)))).map(([event]) => event);
    // One transaction per statement: fewer transactions than events (two go at once, the others wait and go together).
    const { rows } = await sql<{ n: number }>`select count(distinct xmin::text)::integer as n from notifications where id in (${sql.join(events.map((event) => event._id))})`.execute(server.container.db);
    expect(rows[0]!.n).toBeLessThan(events.length);
    expect(await sent()).toBe(before.sent + 12);
    expect(await total('channel=in_app')).toBe(before.inApp + 12);
    expect(await total(`subscriberId=${subscribers[0]!.subscriberId}`)).toBe(before.first + 1);
    const page = await server.deps.store.notifications.listWithTexts(scope.environmentId, { page: 0, limit: 50, before: '2100-01-01T00:00:00.000Z' });
    for (const event of events) {
      const entry = page.data.find((listed) => listed._id === event._id);
      expect(entry && 'keptText' in entry ? entry.keptText : undefined).toBe(serializeNotificationEvent(withPresentableJobs((await server.deps.store.notifications.get(scope.environmentId, event._id))!)));
    }
  });

  it('the list text kept with the write is byte for byte the event as a read of it assembles it, and a page uses it at once', async () => {
    await createWorkflow(server, {
      workflowId: 'held-rich',
      tags: ['billing', 'eu'],
      severity: 'high',
      steps: [{
        name: 'inbox',
        type: 'in_app',
        controlValues: {
          subject: 'Invoice {{ payload.invoice.number }}',
          body: 'Hi {{ subscriber.firstName }}, {{ payload.invoice.total }} is due',
          avatar: 'https://example.com/a.png',
          data: { kind: 'invoice' },
          primaryAction: { label: 'Pay', redirect: { url: 'https://example.com/pay', target: '_blank' } },
          redirect: { url: 'https://example.com/invoices' },
        },
      }],
    });
    const subscriber = await insertSubscriber(server.deps.store, scope, { firstName: 'Ada', email: 'ada@example.com', data: { plan: 'pro' } } as never);
    const trigger = await acceptedTrigger('held-rich', subscriber.subscriberId, {
      payload: { invoice: { number: 'N-1', total: '12.50 €', lines: [1, 2] }, note: null },
      overrides: { inApp: { tag: 'x' } },
    });
    await processTrigger(server.deps, { environmentId: trigger.environmentId, triggerId: trigger._id }, { runFirstStep });
    const [event] = await eventsOf(server, trigger.transactionId);
    const kept = await server.container.db.selectFrom('notification_texts').select('text').where('notification_id', '=', event._id).executeTakeFirst();
    expect(kept).toBeDefined();
    const stored = (await server.deps.store.notifications.get(trigger.environmentId, event._id))!;
    expect(kept!.text).toBe(serializeNotificationEvent(withPresentableJobs(stored)));
    // PostgreSQL: written by the held statement itself, with the print of the rows it wrote (no window, no read back),
    // so a page uses it as soon as the write is done; and no longer once another write touches the event.
    const pageText = async () => {
      // The activity feed's page (time bounds only): the page that reads kept texts on both databases.
      const page = await server.deps.store.notifications.listWithTexts(trigger.environmentId, { page: 0, limit: 50, before: '2100-01-01T00:00:00.000Z' });
      const entry = page.data.find((listed) => listed._id === event._id);
      expect(entry).toBeDefined();
      return entry && 'keptText' in entry ? entry.keptText : undefined;
    };
    expect(await pageText()).toBe(kept!.text);
    const [job] = await server.deps.store.jobs.listForNotification(trigger.environmentId, event._id);
    await server.deps.store.jobs.addDetail(job!, { _id: newId(), createdAt: new Date().toISOString(), status: 'Success', detail: 'Seen', isRetry: false, isTest: false, source: 'Webhook', raw: null });
    expect(await pageText()).toBeUndefined();
  });

  it('writes the event with its first step queued, and queues it, when the step could not run at once', async () => {
    const subscriber = await insertSubscriber(server.deps.store, scope);
    const trigger = await acceptedTrigger('held-one', subscriber.subscriberId);
    const { deps, enqueued } = observedDeps();

    await processTrigger(deps, { environmentId: trigger.environmentId, triggerId: trigger._id }, { runFirstStep: async () => false });

    const [event] = await eventsOf(server, trigger.transactionId);
    expect(event.jobs.map((job: any) => job.status)).toEqual(['queued']);
    expect(enqueued.map((add) => [add.name, add.visible])).toEqual([['run-step', true]]);
    expect((await server.deps.store.triggers.get(trigger.environmentId, trigger._id))?.state).toBe('processed');
  });
});

describe('Store.batch', () => {
  let server: TestServer;
  let scope: Scope;

  beforeAll(async () => {
    server = await startTestServer();
    scope = await scopeOf(server.deps.store, server.devEnvironmentId);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('writes nothing of a batch whose work fails', async () => {
    const subscriber = await insertSubscriber(server.deps.store, scope);
    const now = new Date().toISOString();
    const trigger: TriggerRecord = {
      _id: '6a1b2c3dffff000f0e0d0c0b',
      environmentId: scope.environmentId,
      organizationId: scope.organizationId,
      transactionId: 'batch-failed',
      workflowId: 'none',
      request: { name: 'none', to: subscriber.subscriberId, payload: {} },
      state: 'accepted',
      createdAt: now,
      updatedAt: now,
    };
    await server.deps.store.triggers.create(trigger);
    let seenInside: string | undefined;
    await expect(
      server.deps.store.batch(async (store) => {
        await store.triggers.setState(trigger.environmentId, trigger._id, 'processed');
        seenInside = (await store.triggers.get(trigger.environmentId, trigger._id))?.state;
        throw new Error('step failed');
      }),
    ).rejects.toThrow('step failed');
    const after = (await server.deps.store.triggers.get(trigger.environmentId, trigger._id))?.state;
    expect([seenInside, after]).toEqual(['accepted', 'accepted']);
    await expect(server.deps.store.batch(async (store) => store.lockKey('x'))).rejects.toThrow();
  });

  it('writes nothing of a batch whose write fails partway: a new subscriber, then an event whose id is taken', async () => {
    const subscriber = await insertSubscriber(server.deps.store, scope);
    const taken = await insertNotificationEvent(server.deps.store, subscriber);
    const fresh = buildSubscriber(scope);
    const { event, jobs } = buildNotificationEvent(subscriber, { _id: taken._id, transactionId: 'batch-partway' });
    await expect(
      server.deps.store.batch(async (store) => {
        await store.subscribers.create(fresh);
        await store.notifications.createWithJobs(event, jobs);
      }),
    ).rejects.toThrow();
    expect(await server.deps.store.subscribers.findBySubscriberId(scope.environmentId, fresh.subscriberId)).toBeUndefined();
    expect(await eventsOf(server, 'batch-partway')).toEqual([]);
    // The database goes on: the same batch without the conflict is written.
    await server.deps.store.batch(async (store) => {
      await store.subscribers.create(fresh);
    });
    expect((await server.deps.store.subscribers.findBySubscriberId(scope.environmentId, fresh.subscriberId))?._id).toBe(fresh._id);
  });

  it("reads through the base store's repositories as they are at the batch, one replaced after an earlier batch included", async () => {
    const base: Store = Object.create(server.deps.store, { subscribers: { value: server.deps.store.subscribers, configurable: true } });
    const lookUp = (store: Store) => store.subscribers.findBySubscriberId(scope.environmentId, 'held-stand-in');
    await base.batch(lookUp);
    let lookups = 0;
    const standIn = Object.create(server.deps.store.subscribers, {
      findBySubscriberId: { value: async () => void lookups++ },
    });
    Object.defineProperty(base, 'subscribers', { value: standIn });
    await base.batch(lookUp);
    expect(lookups).toBe(1);
  });
});
