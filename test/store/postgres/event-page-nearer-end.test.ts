import { CompiledQuery, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { seekPage } from '../../../src/store/sql/notification-repository.js';
import { servicesAvailable } from '../../helpers/databases.js';
import { nodesOf, type PlanNode } from '../../helpers/pg-plans.js';
import { bareEventsSchema } from '../../helpers/grow-events.js';

/**
 * A deep events page on PostgreSQL (seekPage) that lies wholly in the older half of its second is read upwards from
 * that second's start (OFFSET counted from its oldest event), as SQLite's sqliteSeek does: the walk of
 * notifications_env_created inside the second passes the events below the page, not the ones above it. 15,000 events
 * at ~1,430 a second (0.7 ms apart), never vacuumed nor analysed (every entry walked is a heap visit).
 */
describe.skipIf(!(await servicesAvailable(['PostgreSQL'])))('PostgreSQL deep events page, read from the nearer end of its second', () => {
  const env = 'env-nearer-end';
  const ROWS = 15_000;
  const at = (i: number) => new Date(Date.UTC(2026, 10, 26, 10, 0, 0) + i * 0.7).toISOString();
  const idOf = (i: number) => i.toString(16).padStart(24, '0');

  const db = bareEventsSchema(env, ROWS);

  /** Entries of notifications read by anything but the primary key (the walks), and the page's ids. */
  async function run(query: CompiledQuery<unknown>): Promise<{ walked: number; ids: string[] }> {
    const { rows } = await db().executeQuery(CompiledQuery.raw(`explain (analyze, format json) ${query.sql}`, query.parameters as unknown[]));
    const nodes = nodesOf(((rows[0] as any)['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan);
    const walked = nodes
      .filter((node) => node['Relation Name'] === 'notifications' && node['Node Type'] !== 'Index Scan')
      .reduce((sum, node) => sum + node['Actual Rows']! * (node['Actual Loops'] ?? 1), 0);
    const ids = (await db().executeQuery(query)).rows.map((row) => (row as { id: string }).id);
    return { walked, ids };
  }

  // The event at an offset (newest first, `before` above all) is number ROWS - offset; its second's events below and above it.
  function placeOf(offset: number, limit: number): { above: number; below: number; inSecond: boolean } {
    const first = ROWS - offset;
    const second = at(first).slice(0, 19);
    let above = 0;
    let below = 0;
    for (let i = 1; i <= ROWS; i++) {
      if (at(i).slice(0, 19) !== second) continue;
      if (i > first) above++;
      else if (i <= first - limit) below++;
    }
    return { above, below, inSecond: first - limit + 1 >= 1 && at(first - limit + 1).slice(0, 19) === second };
  }

  it('a page in the older half of its second walks the events below it, and answers as the OFFSET walk', async () => {
    let checked = 0;
    for (const offset of [1100, 2300, 4500, 6100, 8900, 11200, 13300]) {
      const { above, below, inSecond } = placeOf(offset, 11);
      if (!inSecond || below >= above) continue;
      for (const withTexts of [false, true]) {
        const { walked, ids } = await run(seekPage({ environmentId: env, before: '2030-01-01T00:00:00.000Z', limit: 11, offset }, withTexts));
        expect(ids).toEqual(Array.from({ length: 11 }, (_, i) => idOf(ROWS - offset - i)));
        // Walked from the top of the second (main's statement) it passes `above` entries; from its start, `below`.
        expect(walked, `offset ${offset}: ${above} above, ${below} below`).toBeLessThanOrEqual(below + 11 + 2);
        expect(walked).toBeLessThan(above);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(6);
  });

  it('every kind of page answers as the OFFSET walk: both halves, across seconds, the last rows, before inside a second, after', async () => {
    const befores = ['2030-01-01T00:00:00.000Z', at(9000) /* inside a second */];
    const afters = [undefined, at(2500)];
    for (const before of befores) {
      for (const after of afters) {
        for (const limit of [11, 4]) {
          for (let offset = 1; offset < ROWS; offset += 373) {
            const { rows } = await sql<{ id: string }>`select id from notifications where environment_id = ${env} and created_at < ${before}
              ${after === undefined ? sql`` : sql`and created_at > ${after}`} order by created_at desc, id desc limit ${limit} offset ${offset}`.execute(db());
            const { ids } = await run(seekPage({ environmentId: env, before, after, limit, offset }, false));
            expect(ids, `offset ${offset} limit ${limit} before ${before} after ${after}`).toEqual(rows.map((row) => row.id));
          }
        }
      }
    }
  }, 120_000);
});
