import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { asDashboard, createDashboardUser, signIn, type DashboardSignIn } from '../helpers/dashboard.js';
import { buildNotificationEvent, insertNotificationEvents, insertSubscriber, scopeOf } from '../helpers/factories.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

/**
 * The Settings page's retention route, and the sweeper running inside the worker (embedded, or the scale-out worker
 * over PostgreSQL with HERALD_TEST_MODE=scaleout): an expired event disappears on its own and the route shows the sweep.
 */
describe('retention settings and the worker sweeper', () => {
  let server: TestServer;
  let viewer: DashboardSignIn;

  beforeAll(async () => {
    server = await startTestServer({
      worker: true,
      // Sweeps 5 s apart: each sweep records itself, an empty one too, so the route shows the sweep that deleted the
      // event only until the next one ends. At 1 s apart a slow read on a loaded machine could miss that window for good.
      env: { HERALD_RETENTION_DAYS: '14', HERALD_MESSAGE_RETENTION_DAYS: 'off', HERALD_RETENTION_SWEEP_INTERVAL_SECONDS: '5', HERALD_RETENTION_PAUSE_MS: '0' },
    });
    await createDashboardUser(server, { email: 'viewer@example.com', role: 'viewer' });
    viewer = await signIn(server, 'viewer@example.com');
  });
  afterAll(async () => server?.close());

  it('deletes an expired event from the worker and shows the retention in force with the last sweep', async () => {
    const scope = await scopeOf(server.deps.store, server.devEnvironmentId);
    const subscriber = await insertSubscriber(server.deps.store, scope, { subscriberId: `old-${newId()}` });
    const oldAt = new Date(Date.now() - 20 * 86_400_000).toISOString();
    const old = buildNotificationEvent(subscriber, { _id: newId(Date.parse(oldAt)), createdAt: oldAt });
    const fresh = buildNotificationEvent(subscriber);
    await insertNotificationEvents(server.deps.store, [old, fresh]);

    const deadline = Date.now() + 30_000;
    while (await server.deps.store.notifications.get(scope.environmentId, old.event._id)) {
      if (Date.now() > deadline) throw new Error('the worker did not sweep the expired event within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await server.deps.store.notifications.get(scope.environmentId, fresh.event._id)).toBeDefined();
    expect(await server.deps.store.jobs.listForNotification(scope.environmentId, old.event._id)).toEqual([]);

    let response = await asDashboard(server, viewer, 'GET', '/v1/dashboard/settings/retention');
    // The sweep that deleted the event records itself when it finishes.
    while (!(response.body.data?.lastSweep?.events >= 1) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      response = await asDashboard(server, viewer, 'GET', '/v1/dashboard/settings/retention');
    }
    expect(response.status).toBe(200);
    const days14 = Date.now() - 14 * 86_400_000;
    expect(response.body.data).toMatchObject({
      events: { days: 14, variable: 'HERALD_RETENTION_DAYS' },
      messages: { days: null, deletesBefore: null, variable: 'HERALD_MESSAGE_RETENTION_DAYS' },
      sweepIntervalSeconds: 5,
      database: process.env.HERALD_TEST_MODE === 'scaleout' ? 'postgres' : 'sqlite',
      lastSweep: { events: 1, jobs: 2, executionDetails: 4, messages: 0, interrupted: false },
    });
    expect(Math.abs(Date.parse(response.body.data.events.deletesBefore) - days14)).toBeLessThan(60_000);
  });

  it('is for signed-in dashboard users only', async () => {
    const withKey = await server.request('GET', '/v1/dashboard/settings/retention');
    expect(withKey.status).toBe(403);
    const anonymous = await server.request('GET', '/v1/dashboard/settings/retention', { key: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
  });
});
