import { CompiledQuery } from 'kysely';
import { describe, expect, it } from 'vitest';
import { seekPage } from '../../../src/store/sql/notification-repository.js';
import { servicesAvailable } from '../../helpers/databases.js';
import { nodesOf, type PlanNode } from '../../helpers/pg-plans.js';
import { bareEventsSchema } from '../../helpers/grow-events.js';


/**
 * A deep events page on PostgreSQL (seekPage) over a table just filled, never vacuumed nor analysed (autovacuum off,
 * as on the bench machine): 15,000 events at 1,400 a second. Without the page's lower bound (the second holding its
 * last row) PostgreSQL read every event below the page's upper bound by a bitmap scan and sorted them all (15-30 ms a
 * page) instead of walking the index from the page's second.
 */
describe.skipIf(!(await servicesAvailable(['PostgreSQL'])))('PostgreSQL deep events page, fresh table', () => {
  const env = 'env-lower-bound';
  const ROWS = 15_000;

  const db = bareEventsSchema(env, ROWS);

  it.each([[10], [500], [5000], [12000]])('page at offset %i reads about its seconds, and sorts no more than them', async (offset) => {
    for (const withTexts of [false, true]) {
      const query = seekPage({ environmentId: env, before: '2030-01-01T00:00:00.000Z', limit: 11, offset }, withTexts);
      const { rows } = await db().executeQuery(CompiledQuery.raw(`explain (analyze, format json) ${query.sql}`, query.parameters as unknown[]));
      const nodes = nodesOf(((rows[0] as any)['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan);
      const events = nodes.filter((node) => node['Relation Name'] === 'notifications' && node['Node Type'] !== 'Index Scan');
      expect(events.length).toBeGreaterThan(0);
      // A second holds 1,400 events here; the page may start near its end and run into the next one.
      for (const node of events) expect(node['Actual Rows']! * (node['Actual Loops'] ?? 1), `${node['Node Type']} ${withTexts}`).toBeLessThanOrEqual(2 * 1430);
      const page = (await db().executeQuery(query)).rows.map((row) => row.id);
      const want = Array.from({ length: 11 }, (_, i) => ROWS - offset - i).filter((i) => i > 0).map((i) => i.toString(16).padStart(24, '0'));
      expect(page).toEqual(want);
    }
  });
});
