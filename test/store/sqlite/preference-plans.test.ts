import BetterSqlite3 from 'better-sqlite3';
import { Kysely, type CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/store/sql/schema.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import { openSqlitePlanProbe, type SqlitePlanProbe } from '../../helpers/sqlite-plan-probe.js';

/**
 * The preference repository on SQLite: the worker's read before each channel step is one statement searching the
 * primary key (never a scan), and the records round-trip (upsert, list, delete).
 */
describe('subscriber preferences on SQLite', () => {
  let probe: SqlitePlanProbe;
  let db: Kysely<Database>;
  let store: SqlStore;
  let plans: BetterSqlite3.Database;
  let sent: CompiledQuery[];

  beforeAll(async () => {
    probe = await openSqlitePlanProbe('herald-pref-plans-');
    ({ db, store, plans, sent } = probe);
  });

  afterAll(async () => {
    await probe.close();
  });

  it('getForDelivery is one statement that searches the primary key', async () => {
    sent.length = 0;
    await store.preferences.getForDelivery('env', 'subscriber', 'workflow');
    expect(sent).toHaveLength(1);
    const [query] = sent;
    const plan = (plans.prepare(`explain query plan ${query.sql}`).all(...(query.parameters as unknown[])) as Array<{ detail: string }>)
      .map((row) => row.detail)
      .join('\n');
    expect(plan).toContain('sqlite_autoindex_subscriber_preferences_1');
    expect(plan).not.toMatch(/^SCAN/m);
  });

  it('records round-trip: global with schedule, workflow records, replaced on save, deleted with the subscriber', async () => {
    const schedule = { isEnabled: true, weeklySchedule: { monday: { isEnabled: true, hours: [{ start: '09:00 AM', end: '05:00 PM' }] } } };
    await store.preferences.saveGlobal('env', 's1', { channels: { email: false }, schedule }, '2026-01-01T00:00:00.000Z');
    await store.preferences.saveWorkflow('env', 's1', 'w1', { enabled: false, channels: { sms: true } }, '2026-01-01T00:00:01.000Z');
    await store.preferences.saveWorkflow('env', 's1', 'w2', { channels: { push: false } }, '2026-01-01T00:00:02.000Z');
    await store.preferences.saveWorkflow('env', 's2', 'w1', { channels: { push: false } }, '2026-01-01T00:00:02.000Z');
    await store.preferences.saveWorkflow('other-env', 's1', 'w1', { channels: { chat: false } }, '2026-01-01T00:00:02.000Z');

    expect(await store.preferences.getForDelivery('env', 's1', 'w1')).toEqual({
      global: { channels: { email: false }, schedule, updatedAt: '2026-01-01T00:00:00.000Z' },
      workflow: { enabled: false, channels: { sms: true }, updatedAt: '2026-01-01T00:00:01.000Z' },
    });
    await store.preferences.saveGlobal('env', 's1', { enabled: true, channels: { email: true } }, '2026-01-02T00:00:00.000Z');
    const listed = await store.preferences.listForSubscriber('env', 's1');
    expect(listed.global).toEqual({ enabled: true, channels: { email: true }, updatedAt: '2026-01-02T00:00:00.000Z' });
    expect(Object.keys(listed.workflows).sort()).toEqual(['w1', 'w2']);

    await store.preferences.deleteForSubscriber('env', 's1');
    expect(await store.preferences.listForSubscriber('env', 's1')).toEqual({ workflows: {} });
    expect(Object.keys((await store.preferences.listForSubscriber('env', 's2')).workflows)).toEqual(['w1']);
    expect(Object.keys((await store.preferences.listForSubscriber('other-env', 's1')).workflows)).toEqual(['w1']);
  });
});
