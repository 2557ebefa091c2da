import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { preparedName } from '../../../src/store/postgres/prepared-statements.js';
import { firstTextPage } from '../../../src/store/sql/notification-repository.js';
import { preparedEventsDatabase } from '../../helpers/grow-events.js';
import { servicesAvailable } from '../../helpers/databases.js';
import { executedPlanOf, genericPlansOf } from '../../helpers/pg-plans.js';

/**
 * The events list's first page (offset 0, firstTextPage) runs prepared on PostgreSQL, and PostgreSQL settles on a
 * generic plan after five runs. Made while the tables held 30 events (no statistics: autovacuum off, as on the bench
 * machine), that plan must still read the page's rows only once they hold 15,000 events with a job, three details and
 * a kept text each: `notifications` walked backwards by notifications_env_created from `before` (or read by its
 * primary key), no sort of the environment's events, no table read whole. Also after `vacuum analyze`.
 */
describe.skipIf(!(await servicesAvailable(['PostgreSQL'])))('PostgreSQL events list first page, prepared, on tables grown after its plan', () => {
  const env = 'env-first-page';
  const ROWS = 15_000;
  const { db: connection, grow, onFreshDatabaseUntilPassed } = preparedEventsDatabase(env);

  it('its generic plans (with and without `after`) made at 30 events read the page\'s rows only at 15,000, and after analyze', async () => {
    await onFreshDatabaseUntilPassed(async () => {
      const db = connection();
      const page = (before: string, withAfter: boolean) =>
        firstTextPage({ environmentId: env, before, limit: 11, offset: 0, ...(withAfter ? { after: '2026-01-01T00:00:00.000Z' } : {}) });
      const plansOf = (name: string) => genericPlansOf(db, name);
      const generic = new Map<boolean, number>();
      for (const withAfter of [false, true]) {
        const name = preparedName(page('2030-01-01T00:00:00.000Z', withAfter).sql);
        expect(name, `after ${withAfter}`).toBeDefined();
        // A request's `before` is the time it was asked at.
        for (let run = 0; run < 8; run++) await db.executeQuery(page(`2029-01-01T00:00:0${run}.000Z`, withAfter));
        generic.set(withAfter, await plansOf(name!));
        expect(generic.get(withAfter)).toBeGreaterThan(0);
      }
      // An offset other than 0 (seekFromOffset set above 1) runs unnamed.
      expect(preparedName(firstTextPage({ environmentId: env, before: '2030-01-01T00:00:00.000Z', limit: 11, offset: 10 }).sql)).toBeUndefined();

      await grow(31, ROWS);
      await sql`set plan_cache_mode = force_generic_plan`.execute(db);
      for (const state of ['grown', 'analyzed'] as const) {
        // This schema's tables only: a bare `vacuum analyze` gives statistics to every schema of the database, those of the
        // plan tests running beside this file too (their plans made at 30 events then read every event).
        if (state === 'analyzed') await sql`vacuum analyze notifications, jobs, execution_details, notification_texts, notification_buckets`.execute(db);
        for (const withAfter of [false, true]) {
          const query = page('2030-01-01T00:00:00.000Z', withAfter);
          const name = preparedName(query.sql)!;
          const nodes = await executedPlanOf(db, name, query);
          const label = `${state}, after ${withAfter}: ${JSON.stringify(nodes.map((n) => [n['Node Type'], n['Relation Name'] ?? n['Index Name'] ?? '', n['Actual Rows']]))}`;
          expect(nodes.filter((node) => node['Node Type'] === 'Seq Scan').map((node) => node['Relation Name']), label).toEqual([]);
          const events = nodes.filter((node) => node['Relation Name'] === 'notifications');
          expect(events.length).toBeGreaterThan(0);
          for (const node of events) expect(node['Index Name'] ?? node['Node Type'], label).toMatch(/^notifications_(env_created|pkey)$/);
          // The page's rows only (a bitmap scan and sort of the environment's events would read all 15,000).
          for (const node of events) expect(node['Actual Rows']! * (node['Actual Loops'] ?? 1), label).toBeLessThanOrEqual(11);
          const found = (await db.executeQuery(query)).rows as Array<{ id: string; kept_text: string | null }>;
          const want = Array.from({ length: 11 }, (_, i) => (ROWS - i).toString(16).padStart(24, '0'));
          expect(found.map((row) => row.id)).toEqual(want);
          expect(found.map((row) => row.kept_text)).toEqual(want.map((id) => `{"kept":t${parseInt(id, 16)}}`));
          // Run by its generic plan.
          expect(await plansOf(name)).toBeGreaterThan(generic.get(withAfter)!);
          generic.set(withAfter, await plansOf(name));
        }
      }
    });
  }, 480_000);
});
