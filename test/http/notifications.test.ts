import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import type { Subscriber } from '../../src/domain/types.js';
import { buildNotificationEvent, insertNotificationEvent, insertNotificationEvents, insertSubscriber, scopeOf, type Scope } from '../helpers/factories.js';
import { expectErrorBody, expectIsoTimestamp, expectRecordId } from '../helpers/shape.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let dev: Scope;
let ada: Subscriber;

const STEP_TYPES = ['in_app', 'email', 'sms', 'chat', 'push', 'digest', 'trigger', 'delay', 'throttle', 'custom', 'http_request'];

beforeAll(async () => {
  server = await startTestServer();
  dev = await scopeOf(server.deps.store, server.devEnvironmentId);
  ada = await insertSubscriber(server.deps.store, dev, { subscriberId: 'ada', firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' });
});
afterAll(async () => {
  await server?.close();
});

/** The spec's Notification event, Job, JobStep, ExecutionDetail and DigestMetadata shapes. */
function expectEventShape(event: any): void {
  expectRecordId(event._id);
  expectRecordId(event._environmentId);
  expectRecordId(event._organizationId);
  expectRecordId(event._subscriberId);
  expect(typeof event.transactionId).toBe('string');
  if (event.createdAt !== undefined) expectIsoTimestamp(event.createdAt);
  if (event.updatedAt !== undefined) expectIsoTimestamp(event.updatedAt);
  for (const channel of event.channels ?? []) expect(STEP_TYPES).toContain(channel);
  if (event.severity !== undefined) expect(['high', 'medium', 'low', 'none']).toContain(event.severity);
  if (event.subscriber !== undefined) {
    expect(typeof event.subscriber.subscriberId).toBe('string');
    expectRecordId(event.subscriber._id);
  }
  if (event.template !== undefined) {
    expect(typeof event.template.name).toBe('string');
    expect(Array.isArray(event.template.triggers)).toBe(true);
    if (event.template.origin !== undefined) expect(['platform-cloud', 'platform-cloud-v1', 'external']).toContain(event.template.origin);
  }
  for (const topic of event.topics ?? []) {
    expect(typeof topic._topicId).toBe('string');
    expect(typeof topic.topicKey).toBe('string');
  }
  for (const job of event.jobs ?? []) {
    expectRecordId(job._id);
    expect(STEP_TYPES).toContain(job.type);
    expect(typeof job.providerId).toBe('string');
    expect(typeof job.status).toBe('string');
    expect(typeof job.step._id).toBe('string');
    expect(typeof job.step.active).toBe('boolean');
    expect(Array.isArray(job.step.filters)).toBe(true);
    expect(typeof job.step._templateId).toBe('string');
    expect(Array.isArray(job.executionDetails)).toBe(true);
    for (const detail of job.executionDetails) {
      expectRecordId(detail._id);
      expect(['Success', 'Warning', 'Failed', 'Pending', 'Queued', 'ReadConfirmation']).toContain(detail.status);
      expect(['Credentials', 'Internal', 'Payload', 'Webhook']).toContain(detail.source);
      expect(typeof detail.detail).toBe('string');
      expect(typeof detail.isRetry).toBe('boolean');
      expect(typeof detail.isTest).toBe('boolean');
      if (detail.createdAt !== undefined) expectIsoTimestamp(detail.createdAt);
    }
    if (job.digest !== undefined) expect(['regular', 'backoff', 'timed']).toContain(job.digest.type);
    expect(job).not.toHaveProperty('_environmentId');
    expect(job).not.toHaveProperty('stepIndex');
  }
}

describe('GET /v1/notifications/{notificationId}', () => {
  it('returns the event with its jobs, steps and execution details', async () => {
    const topicId = newId();
    const inserted = await insertNotificationEvent(server.deps.store, ada, {
      channels: ['digest', 'in_app', 'email'],
      severity: 'high',
      critical: true,
      contextKeys: ['tenant:acme'],
      topics: [{ _topicId: topicId, topicKey: 'news' }],
      tags: ['billing'],
    });
    const response = await server.request('GET', `/v1/notifications/${inserted._id}`);
    expect(response.status).toBe(200);
    const event = response.body.data;
    expectEventShape(event);
    expect(event).toMatchObject({
      _id: inserted._id, _environmentId: dev.environmentId, _organizationId: dev.organizationId, _subscriberId: ada._id,
      transactionId: inserted.transactionId, _templateId: inserted._templateId, channels: ['digest', 'in_app', 'email'],
      subscriber: { subscriberId: 'ada', _id: ada._id, firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
      template: inserted.template, payload: { orderId: 42 }, controls: {}, to: { subscriberId: 'ada' }, tags: ['billing'],
      topics: [{ _topicId: topicId, topicKey: 'news' }], severity: 'high', critical: true, contextKeys: ['tenant:acme'],
      createdAt: inserted.createdAt, updatedAt: inserted.updatedAt,
    });
    expect(event.jobs.map((job: any) => job.type)).toEqual(['digest', 'in_app', 'email']);
    const [digest, inApp, email] = event.jobs;
    expect(digest.digest).toEqual({ type: 'regular', amount: 5, unit: 'minutes', digestKey: 'orderId', events: [{ orderId: 42 }], backoff: false });
    expect(digest.scheduleExtensionsCount).toBe(0);
    expect(inApp).toMatchObject({ _id: inserted.jobs[1]._id, providerId: 'novu', status: 'completed', payload: { orderId: 42 }, overrides: {} });
    expect(inApp.step).toEqual(inserted.jobs[1].step);
    expect(email.providerId).toBe('sendgrid');
    expect(email.executionDetails).toEqual(inserted.jobs[2].executionDetails);
    expect(email.executionDetails.map((d: any) => d.status)).toEqual(['Pending', 'Success']);

    const stored = await server.deps.store.notifications.get(dev.environmentId, inserted._id);
    expect(stored!.jobs).toHaveLength(3);
  });

  it('answers 404 for an unknown id, a malformed id and another environment', async () => {
    const inserted = await insertNotificationEvent(server.deps.store, ada);
    const unknownId = newId();
    const unknown = await server.request('GET', `/v1/notifications/${unknownId}`);
    expect(unknown.status).toBe(404);
    expectErrorBody(unknown.body, 404);
    expect(unknown.body.message).toBe(`Notification with id ${unknownId} not found`);
    expect((await server.request('GET', '/v1/notifications/xyz')).status).toBe(404);
    const other = await server.request('GET', `/v1/notifications/${inserted._id}`, { key: server.prodKey });
    expect(other.status).toBe(404);
  });
});

describe('GET /v1/notifications', () => {
  it('lists newest first with jobs, and applies every filter', async () => {
    const fresh = await startTestServer();
    try {
      const store = fresh.deps.store;
      const scope = await scopeOf(store, fresh.devEnvironmentId);
      const u1 = await insertSubscriber(store, scope, { subscriberId: 'alpha-1', firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' });
      const u2 = await insertSubscriber(store, scope, { subscriberId: 'beta-2', firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com' });
      const now = Date.now();
      const topic = { _id: newId(), _environmentId: scope.environmentId, _organizationId: scope.organizationId, key: 'news', createdAt: new Date().toISOString(), updatedAt: new Date().toISOString() };
      await store.topics.create(topic);
      const [subscription] = await store.topics.addSubscriptions([
        { _id: newId(), _environmentId: scope.environmentId, _topicId: topic._id, topicKey: 'news', _subscriberId: u2._id, subscriberId: 'beta-2', createdAt: topic.createdAt },
      ]);
      const templateA = newId();
      const templateB = newId();
      const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();
      const e1 = await insertNotificationEvent(store, u1, { createdAt: at(50), channels: ['in_app'], _templateId: templateA, severity: 'high', transactionId: 'tx-1', contextKeys: ['tenant:acme', 'region:eu'] });
      const e2 = await insertNotificationEvent(store, u2, { createdAt: at(40), channels: ['email', 'sms'], _templateId: templateB, severity: 'low', transactionId: 'tx-2', topics: [{ _topicId: topic._id, topicKey: 'news' }] });
      const e3 = await insertNotificationEvent(store, u1, { createdAt: at(30), channels: ['digest', 'email'], _templateId: templateA, severity: 'none', transactionId: 'tx-3', contextKeys: ['tenant:acme'] });
      const e4 = await insertNotificationEvent(store, u2, { createdAt: at(20), channels: ['push'], _templateId: templateB, transactionId: 'tx-4' });
      const future = await insertNotificationEvent(store, u1, { createdAt: new Date(now + 3_600_000).toISOString(), transactionId: 'tx-future' });

      const all = await fresh.request('GET', '/v1/notifications');
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({ page: 0, pageSize: 10, hasMore: false });
      expect(all.body.data.map((e: any) => e._id)).toEqual([e4._id, e3._id, e2._id, e1._id]);
      all.body.data.forEach(expectEventShape);
      expect(all.body.data[1].jobs.map((j: any) => j._id)).toEqual(e3.jobs.map((j) => j._id));
      expect(all.body.data[1].jobs[0].executionDetails).toEqual(e3.jobs[0].executionDetails);

      const ids = async (query: string) => {
        const response = await fresh.request('GET', `/v1/notifications?${query}`);
        expect(response.status, query).toBe(200);
        return response.body.data.map((e: any) => e._id);
      };
      expect(await ids('channels=email')).toEqual([e3._id, e2._id]);
      expect(await ids('channels=push&channels=in_app')).toEqual([e4._id, e1._id]);
      expect(await ids('channels=digest')).toEqual([e3._id]);
      expect(await ids(`templates=${templateA}`)).toEqual([e3._id, e1._id]);
      expect(await ids(`templates=${templateA}&templates=${templateB}`)).toHaveLength(4);
      expect(await ids('emails=grace@example.com')).toEqual([e4._id, e2._id]);
      expect(await ids('emails=grace@example.com&emails=ada@example.com')).toHaveLength(4);
      expect(await ids('subscriberIds=alpha-1')).toEqual([e3._id, e1._id]);
      expect(await ids('subscriberIds=alpha-1&subscriberIds=beta-2')).toHaveLength(4);
      expect(await ids('severity=high')).toEqual([e1._id]);
      expect(await ids('severity=low&severity=none')).toEqual([e4._id, e3._id, e2._id]);
      expect(await ids('transactionId=tx-2')).toEqual([e2._id]);
      expect(await ids('topicKey=news')).toEqual([e2._id]);
      expect(await ids('topicKey=other')).toEqual([]);
      expect(await ids(`subscriptionId=${subscription._id}`)).toEqual([e2._id]);
      expect(await ids('contextKeys=tenant:acme')).toEqual([e3._id]);
      expect(await ids('contextKeys=region:eu&contextKeys=tenant:acme')).toEqual([e1._id]);
      expect(await ids('search=ALPHA')).toEqual([e3._id, e1._id]);
      expect(await ids('search=grace@')).toEqual([e4._id, e2._id]);
      expect(await ids('search=hopper')).toEqual([e4._id, e2._id]);
      expect(await ids('search=ada%20love')).toEqual([e3._id, e1._id]);
      expect(await ids('search=%25')).toEqual([]);
      expect(await ids(`channels=email&subscriberIds=alpha-1&templates=${templateA}`)).toEqual([e3._id]);
      expect(await ids(`after=${encodeURIComponent(at(45))}&before=${encodeURIComponent(at(25))}`)).toEqual([e3._id, e2._id]);
      expect(await ids(`after=${encodeURIComponent(at(30))}`)).toEqual([e4._id]);
      expect(await ids(`before=${encodeURIComponent(new Date(now + 7_200_000).toISOString())}`)).toEqual([future._id, e4._id, e3._id, e2._id, e1._id]);
      const offset = new Date(now - 35 * 60_000);
      const plusTwo = new Date(offset.getTime() + 2 * 3_600_000).toISOString().replace(/\.\d{3}Z$/, '+02:00');
      expect(await ids(`after=${encodeURIComponent(plusTwo)}`)).toEqual([e4._id, e3._id]);
      expect(await ids('after=2000-01-01&before=2000-01-02')).toEqual([]);

      const page0 = await fresh.request('GET', '/v1/notifications?limit=3');
      expect(page0.body).toMatchObject({ page: 0, pageSize: 3, hasMore: true });
      expect(page0.body).not.toHaveProperty('totalCount');
      const page1 = await fresh.request('GET', '/v1/notifications?limit=3&page=1');
      expect(page1.body).toMatchObject({ page: 1, pageSize: 3, hasMore: false });
      expect(page1.body.data.map((e: any) => e._id)).toEqual([e1._id]);
      const exact = await fresh.request('GET', '/v1/notifications?limit=2&page=1');
      expect(exact.body.hasMore).toBe(false);
      expect(await ids('page=5')).toEqual([]);

      const prod = await fresh.request('GET', '/v1/notifications', { key: fresh.prodKey });
      expect(prod.body.data).toEqual([]);
    } finally {
      await fresh.close();
    }
  });

  it('filters by status (a Herald extension), combined with the other filters and paging', async () => {
    const fresh = await startTestServer();
    try {
      const store = fresh.deps.store;
      const scope = await scopeOf(store, fresh.devEnvironmentId);
      const u1 = await insertSubscriber(store, scope, { subscriberId: 'status-1' });
      const u2 = await insertSubscriber(store, scope, { subscriberId: 'status-2' });
      const now = Date.now();
      const event = (subscriber: Subscriber, minutesAgo: number, statuses: string[]) => {
        const built = buildNotificationEvent(subscriber, { createdAt: new Date(now - minutesAgo * 60_000).toISOString(), channels: statuses.map(() => 'email' as const) });
        built.jobs.forEach((job, i) => (job.status = statuses[i] as typeof job.status));
        return built;
      };
      const failed1 = event(u1, 60, ['completed', 'failed']);
      const done1 = event(u1, 50, ['completed']);
      const pending1 = event(u2, 40, ['completed', 'delayed']);
      const canceled1 = event(u2, 30, ['canceled']);
      const failed2 = event(u2, 20, ['failed', 'queued']);
      const done2 = event(u2, 10, ['completed', 'canceled']);
      await insertNotificationEvents(store, [failed1, done1, pending1, canceled1, failed2, done2]);
      const ids = async (query: string) => {
        const response = await fresh.request('GET', `/v1/notifications?${query}`);
        expect(response.status, query).toBe(200);
        return response.body.data.map((e: any) => e._id);
      };
      expect(await ids('status=failed')).toEqual([failed2.event._id, failed1.event._id]);
      expect(await ids('status=pending')).toEqual([pending1.event._id]);
      expect(await ids('status=completed')).toEqual([done2.event._id, done1.event._id]);
      expect(await ids('status=canceled')).toEqual([canceled1.event._id]);
      expect(await ids('status=failed&subscriberIds=status-1')).toEqual([failed1.event._id]);
      expect(await ids(`status=completed&after=${encodeURIComponent(new Date(now - 45 * 60_000).toISOString())}`)).toEqual([done2.event._id]);
      const first = await fresh.request('GET', '/v1/notifications?status=failed&limit=1');
      expect(first.body).toMatchObject({ page: 0, pageSize: 1, hasMore: true });
      expect(first.body.data.map((e: any) => e._id)).toEqual([failed2.event._id]);
      const second = await fresh.request('GET', '/v1/notifications?status=failed&limit=1&page=1');
      expect(second.body).toMatchObject({ page: 1, hasMore: false });
      expect(second.body.data.map((e: any) => e._id)).toEqual([failed1.event._id]);
      expect(await ids('status=failed&limit=50')).toHaveLength(2);
      const prod = await fresh.request('GET', '/v1/notifications?status=failed', { key: fresh.prodKey });
      expect(prod.body.data).toEqual([]);

      for (const query of ['status=broken', 'status=FAILED', 'status=', 'status=failed&status=pending']) {
        const response = await fresh.request('GET', `/v1/notifications?${query}`);
        expect(response.status, query).toBe(400);
        expectErrorBody(response.body, 400);
        expect(response.body.message.join(), query).toMatch(/status must be one of the following values: failed, pending, completed, canceled/);
      }
    } finally {
      await fresh.close();
    }
  });

  it('rejects bad query parameters with 400', async () => {
    const cases = [
      'limit=0', 'limit=51', 'limit=x', 'page=-1', 'page=0.5', 'channels=fax', 'channels=email&channels=fax', 'severity=urgent',
      'after=yesterday', 'before=2026-13-01', 'after=2026-02-30', 'before=12345', 'after=2026-01-02&before=2026-01-01',
      'contextKeys=novalue:', 'contextKeys=plain',
    ];
    for (const query of cases) {
      const response = await server.request('GET', `/v1/notifications?${query}`);
      expect(response.status, query).toBe(400);
      expectErrorBody(response.body, 400);
    }
    const limit = await server.request('GET', '/v1/notifications?limit=51');
    expect(limit.body.message.join()).toMatch(/limit must be <= 50/);
    const order = await server.request('GET', '/v1/notifications?after=2026-01-02&before=2026-01-01');
    expect(order.body.message).toEqual(['after must not be later than before']);
  });

  it('applies the configured retention window as the default lower bound', async () => {
    const retained = await startTestServer({ config: { activityRetentionDays: 7 } });
    try {
      const scope = await scopeOf(retained.deps.store, retained.devEnvironmentId);
      const user = await insertSubscriber(retained.deps.store, scope);
      const old = await insertNotificationEvent(retained.deps.store, user, { createdAt: new Date(Date.now() - 8 * 86_400_000).toISOString() });
      const recent = await insertNotificationEvent(retained.deps.store, user, { createdAt: new Date(Date.now() - 86_400_000).toISOString() });
      const byDefault = await retained.request('GET', '/v1/notifications');
      expect(byDefault.body.data.map((e: any) => e._id)).toEqual([recent._id]);
      const explicit = await retained.request('GET', '/v1/notifications?after=2000-01-01T00:00:00Z');
      expect(explicit.body.data.map((e: any) => e._id)).toEqual([recent._id, old._id]);
    } finally {
      await retained.close();
    }
  });
});
