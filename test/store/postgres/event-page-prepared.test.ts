import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { preparedName } from '../../../src/store/postgres/prepared-statements.js';
import { seekPage } from '../../../src/store/sql/notification-repository.js';
import { preparedEventsDatabase } from '../../helpers/grow-events.js';
import { servicesAvailable } from '../../helpers/databases.js';
import { executedPlanOf, genericPlansOf } from '../../helpers/pg-plans.js';

/**
 * The events page's seek (seekPage) runs prepared on PostgreSQL, and PostgreSQL settles on a generic plan after five
 * runs. Made while the tables held 30 events (no statistics: autovacuum off, as on the bench machine), that plan must
 * still read about the page's seconds once they hold 15,000 events at 1,400 a second (each with a job, three details
 * and a kept text): every read of `notifications` by notifications_env_created or its primary key. The generic plan
 * made for plain comparisons counted `before`'s second by notifications_env_transaction_list, a walk of every event of
 * the environment. The statement's generic plan is what is held here (plan_cache_mode), whatever PostgreSQL would pick.
 */
describe.skipIf(!(await servicesAvailable(['PostgreSQL'])))('PostgreSQL events page seek, prepared, on tables grown after its plan', () => {
  const env = 'env-prepared-seek';
  const ROWS = 15_000;
  const { db: connection, grow, onFreshDatabaseUntilPassed } = preparedEventsDatabase(env);

  it('its generic plans (with and without kept texts) made at 30 events read about the page\'s seconds at 15,000, and after analyze', async () => {
    await onFreshDatabaseUntilPassed(async () => {
      const db = connection();
      const before = '2030-01-01T00:00:00.000Z';
      const page = (offset: number, withTexts: boolean) => seekPage({ environmentId: env, before, limit: 11, offset }, withTexts);
      const generic = new Map<boolean, number>();
      const plansOf = (name: string) => genericPlansOf(db, name);
      for (const withTexts of [false, true]) {
        for (let offset = 1; offset <= 8; offset++) await db.executeQuery(page(offset, withTexts));
        // PostgreSQL settled on its generic plan while the table held 30 events.
        generic.set(withTexts, await plansOf(preparedName(page(1, withTexts).sql)!));
        expect(generic.get(withTexts)).toBeGreaterThan(0);
      }

      await grow(31, ROWS);
      // The generic plan whatever its estimated cost against a custom plan's: a grown index (a new root page) makes
      // PostgreSQL plan again, and then it may keep to custom plans; this holds what a generic plan reads, made at 30
      // events (without texts: never planned again here) and after `vacuum analyze` (statistics, as autovacuum leaves them).
      await sql`set plan_cache_mode = force_generic_plan`.execute(db);
      const states = [['grown', false], ['grown', true], ['analyzed', false], ['analyzed', true]] as const;
      for (const [state, withTexts] of states) {
        // This schema's tables only: a bare `vacuum analyze` gives statistics to every schema of the database, those of the
        // plan tests running beside this file too (their plans made at 30 events then read every event).
        if (state === 'analyzed' && !withTexts) await sql`vacuum analyze notifications, jobs, execution_details, notification_texts, notification_buckets`.execute(db);
        const name = preparedName(page(1, withTexts).sql)!;
        for (const offset of [10, 500, 5000, 12000]) {
          const query = page(offset, withTexts);
          const nodes = await executedPlanOf(db, name, query);
          // No table read whole (the print's jobs and details included).
          expect(nodes.filter((node) => node['Node Type'] === 'Seq Scan').map((node) => node['Relation Name']), `${state}, texts ${withTexts}, offset ${offset}`).toEqual([]);
          const events = nodes.filter((node) => node['Relation Name'] === 'notifications');
          expect(events.length).toBeGreaterThan(0);
          for (const node of events) expect(node['Index Name'] ?? node['Node Type'], `${state}, texts ${withTexts}, offset ${offset}`).toMatch(/^notifications_(env_created|pkey)$/);
          // A second holds 1,430 events here; the page may start near its end and run into the next one.
          for (const node of events) expect(node['Actual Rows']! * (node['Actual Loops'] ?? 1)).toBeLessThanOrEqual(2 * 1430);
          const found = (await db.executeQuery(query)).rows as Array<{ id: string; kept_text?: string | null }>;
          const want = Array.from({ length: 11 }, (_, i) => ROWS - offset - i).map((i) => i.toString(16).padStart(24, '0'));
          expect(found.map((row) => row.id)).toEqual(want);
          if (withTexts) expect(found.map((row) => row.kept_text)).toEqual(want.map((id) => `{"kept":t${parseInt(id, 16)}}`));
          // An event sent as its kept text has no other column sent (the page writes the text alone).
          if (withTexts) for (const row of found) expect(Object.keys(row).filter((column) => column !== 'id' && column !== 'kept_text' && (row as Record<string, unknown>)[column] !== null)).toEqual([]);
        }
        // Run by its generic plan.
        expect(await plansOf(name)).toBeGreaterThanOrEqual(generic.get(withTexts)! + 8);
        generic.set(withTexts, await plansOf(name));
      }
    });
  }, 480_000);
});
