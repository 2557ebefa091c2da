import { randomBytes } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/domain/ids.js';
import type { NotificationListFilter } from '../../../src/store/ports.js';
import { SecretBox } from '../../../src/store/secret-box.js';
import { PRINT_SQL } from '../../../src/store/sql/notification-repository.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import { seededRandom } from '../../helpers/factories.js';
import { openTestPostgres, openTestSqlite, servicesAvailable, type TestSqlDatabase } from '../../helpers/databases.js';

/**
 * Deep pages of the event list with time bounds only skip whole seconds counted in notification_buckets (kept by
 * triggers: migration 0026 on PostgreSQL, 0027 on SQLite). Every page equals the events the test wrote, sorted newest
 * first by (createdAt, id), within the bounds, through dense, sparse and empty seconds, ties, another environment's
 * events, deletes, late inserts and moved rows, and while another transaction's writes are not committed; and the
 * counts always equal a count of the rows.
 */
const implementations: Array<{ name: string; available: boolean; open: () => Promise<TestSqlDatabase> }> = [
  { name: 'PostgreSQL', available: await servicesAvailable(['PostgreSQL']), open: openTestPostgres },
  { name: 'SQLite', available: true, open: openTestSqlite },
];

interface Row { id: string; environmentId: string; createdAt: string }

const at = (second: number, ms: number) => new Date(Date.UTC(2026, 2, 1, 10, 0, 0) + second * 1000 + ms).toISOString();

for (const implementation of implementations) {
  describe.skipIf(!implementation.available)(`event list deep pages on ${implementation.name}`, () => {
    let database: TestSqlDatabase;
    let seekStore: SqlStore;
    /** SQLite: the seek finds the page's tenth of its second in every second (notification_tenths, migration 0033). */
    let tenthStore: SqlStore;
    let offsetStore: SqlStore;
    const env = newId();
    const other = newId();
    const rows = new Map<string, Row>();

    async function insert(batch: Row[]): Promise<void> {
      for (let i = 0; i < batch.length; i += 200) {
        await database.db
          .insertInto('notifications')
          .values(batch.slice(i, i + 200).map((row) => ({
            id: row.id,
            environment_id: row.environmentId,
            organization_id: 'org',
            subscriber_id: 'sub',
            external_subscriber_id: 'sub-1',
            subscriber_email: null,
            template_id: null,
            transaction_id: `tx-${row.id}`,
            digested_notification_id: null,
            channels_mask: 1,
            severity: null,
            context_keys_norm: '',
            document: '{}',
            created_at: row.createdAt,
            updated_at: row.createdAt,
          })))
          .execute();
      }
      for (const row of batch) rows.set(row.id, row);
    }

    function expected(filter: { after?: string; before: string }): string[] {
      return [...rows.values()]
        .filter((row) => row.environmentId === env && row.createdAt < filter.before && (filter.after === undefined || row.createdAt > filter.after))
        .sort((x, y) => (x.createdAt === y.createdAt ? (x.id < y.id ? 1 : -1) : x.createdAt < y.createdAt ? 1 : -1))
        .map((row) => row.id);
    }

    /** Pages around every offset of interest, through the seek (from offset 0 on) and through plain OFFSET. */
    async function expectPages(filter: { after?: string; before: string }, offsets: number[]): Promise<number> {
      const ids = expected(filter);
      let checked = 0;
      for (const limit of [1, 10, 50]) {
        const pages = new Set(offsets.filter((offset) => offset >= 0).map((offset) => Math.floor(offset / limit)));
        pages.add(Math.floor(ids.length / limit));
        pages.add(Math.floor(ids.length / limit) + 1);
        for (const page of pages) {
          const query: NotificationListFilter = { ...filter, page, limit };
          const want = { limit, page, ids: ids.slice(page * limit, (page + 1) * limit), hasMore: ids.length > (page + 1) * limit };
          const kept = await keptTexts(want.ids);
          for (const store of [seekStore, tenthStore, offsetStore]) {
            const result = await store.notifications.list(env, query);
            expect({ limit, page, ids: result.data.map((event) => event._id), hasMore: result.hasMore }).toEqual(want);
            // The route's read: the same events, each as its kept text where it has one (SQLite keeps texts).
            const withTexts = await store.notifications.listWithTexts(env, query);
            expect({ limit, page, ids: withTexts.data.map((event) => event._id), hasMore: withTexts.hasMore }).toEqual(want);
            expect(withTexts.data.map((event) => ('keptText' in event ? event.keptText : undefined))).toEqual(want.ids.map((id) => kept.get(id)));
          }
          checked++;
        }
      }
      return checked;
    }

    /** The kept texts of these events that a page shows (on PostgreSQL those whose print still matches its rows). */
    async function keptTexts(ids: string[]): Promise<Map<string, string>> {
      if (ids.length === 0) return new Map();
      if (implementation.name !== 'SQLite') {
        const { rows: kept } = await sql<{ notification_id: string; text: string }>`
          select notification_texts.notification_id, notification_texts.text from notification_texts
          inner join notifications on notifications.id = notification_texts.notification_id
          where notification_texts.notification_id in (${sql.join(ids)}) and notification_texts.print = ${sql.raw(PRINT_SQL)}`.execute(database.db);
        return new Map(kept.map((row) => [row.notification_id, row.text]));
      }
      const kept = await database.db.selectFrom('notification_texts').select(['notification_id', 'text']).where('notification_id', 'in', ids).execute();
      return new Map(kept.map((row) => [row.notification_id, row.text]));
    }

    /** notification_buckets equals a count of the rows per environment and second. */
    async function expectBucketsExact(): Promise<void> {
      const counted = await database.db
        .selectFrom('notifications')
        .select(['environment_id', sql<string>`substr(created_at, 1, 19)`.as('bucket'), sql<number>`count(*)`.as('n')])
        .groupBy(['environment_id', sql`substr(created_at, 1, 19)`])
        .execute();
      const kept = await database.db
        .selectFrom('notification_buckets')
        .select(['environment_id', 'bucket', sql<number>`sum(n)`.as('n')])
        .groupBy(['environment_id', 'bucket'])
        .execute();
      const key = (row: { environment_id: string; bucket: string; n: number | string }) => `${row.environment_id} ${row.bucket} ${Number(row.n)}`;
      expect(kept.map(key).sort()).toEqual(counted.map(key).sort());
      const empty = await database.db.selectFrom('notification_buckets').select('bucket').where('n', '<=', 0).execute();
      expect(empty).toEqual([]);
      if (implementation.name !== 'SQLite') return;
      // SQLite's tenths of a second (0033) likewise.
      const countedTenths = await database.db
        .selectFrom('notifications')
        .select(['environment_id', sql<string>`substr(created_at, 1, 21)`.as('bucket'), sql<number>`count(*)`.as('n')])
        .groupBy(['environment_id', sql`substr(created_at, 1, 21)`])
        .execute();
      const keptTenths = await database.db.selectFrom('notification_tenths').select(['environment_id', 'bucket', 'n']).execute();
      expect(keptTenths.map(key).sort()).toEqual(countedTenths.map(key).sort());
    }

    beforeAll(async () => {
      database = await implementation.open();
      const options = { dialect: database.dialect, secretBox: new SecretBox(randomBytes(32)) } as const;
      seekStore = new SqlStore(database.db, { ...options, seekFromOffset: 0 });
      tenthStore = new SqlStore(database.db, { ...options, seekFromOffset: 0, tenthsFromEvents: 1 });
      offsetStore = new SqlStore(database.db, { ...options, seekFromOffset: Number.MAX_SAFE_INTEGER });
      const random = seededRandom(24);
      const batch: Row[] = [];
      // Seconds -100-39: one event each (sparse: more seconds than a walk takes, and than SQLite reads at once). 50-52:
      // 30 each. 60-65: 300 each, with 56-59 empty. Times repeat within a second (ties break on id). Another
      // environment shares the seconds.
      const density = (second: number) => (second < 40 ? 1 : second >= 50 && second < 53 ? 30 : second >= 60 && second < 66 ? 300 : 0);
      for (let second = -100; second < 66; second++) {
        for (let i = 0; i < density(second); i++) {
          batch.push({ id: newId(), environmentId: env, createdAt: at(second, Math.floor(random() * 40) * 25) });
          if (i % 3 === 0) batch.push({ id: newId(), environmentId: other, createdAt: at(second, Math.floor(random() * 1000)) });
        }
      }
      // Later than any `before` used below, and a row exactly at one.
      batch.push({ id: newId(), environmentId: env, createdAt: at(70, 0) }, { id: newId(), environmentId: env, createdAt: at(63, 500) });
      await insert(batch);
      // Every third event has a kept text (its list entry, as the worker keeps it once its jobs have ended): pages mix
      // texts and events assembled from their rows. Later deletes and moves drop a text (SQLite's triggers) or change
      // the event's print (PostgreSQL: the text is then not used).
      const texts = batch.filter((row, index) => row.environmentId === env && index % 3 === 0);
      for (let i = 0; i < texts.length; i += 200) {
        await database.db
          .insertInto('notification_texts')
          .values(texts.slice(i, i + 200).map((row) => ({ notification_id: row.id, environment_id: env, text: `{"_id":"${row.id}","kept":true}`, print: null })))
          .execute();
      }
      if (implementation.name !== 'SQLite') {
        await sql`update notification_texts set print = (select ${sql.raw(PRINT_SQL)} from notifications where notifications.id = notification_texts.notification_id)`.execute(database.db);
        expect((await keptTexts(texts.map((row) => row.id))).size).toBe(texts.length);
      }
    }, 120_000);
    afterAll(async () => {
      await database?.close();
    });

    const offsets = [0, 1, 9, 10, 299, 300, 301, 599, 600, 1000, 1234, 1499, 1500, 1501, 1799, 1800, 1801, 1830, 1889, 1890, 1891, 1900, 1915, 1929, 1930, 1931, 1950];

    it('returns every page as OFFSET does: whole seconds, a partial second under `before`, `after` inside a second, past the end', async () => {
      await expectBucketsExact();
      expect(await expectPages({ before: at(70, 0) }, offsets)).toBeGreaterThanOrEqual(60);
      // `before` inside the busiest second and exactly at an event's time (that event is left out).
      await expectPages({ before: at(63, 500) }, offsets);
      await expectPages({ before: at(63, 500), after: at(51, 500) }, offsets);
      // `after` inside a sparse second, `before` inside a sparse one: walks that run out of seconds.
      await expectPages({ before: at(30, 999), after: at(3, 0) }, [0, 5, 26, 27, 28, 40]);
      // Only sparse seconds below `before`: SQLite walks the index below the first seconds it read.
      await expectPages({ before: at(30, 999) }, [0, 5, 63, 64, 65, 100, 127, 130, 131, 132]);
      await expectPages({ before: at(1000, 0), after: at(65, 999) }, [0, 1, 2]);
    }, 120_000);

    it.skipIf(implementation.name !== 'SQLite')('counts the rows of `before`\'s second only when that second holds events', async () => {
      // better-sqlite3's statements, counted by their text while a page is read.
      const probe = new BetterSqlite3(':memory:');
      const prototype = Object.getPrototypeOf(probe.prepare('select 1')) as { all: (...args: unknown[]) => unknown };
      probe.close();
      const all = prototype.all;
      const texts: string[] = [];
      prototype.all = function counted(this: { source: string }, ...args: unknown[]) {
        texts.push(this.source);
        return all.apply(this, args);
      };
      const countsOfSecond = async (before: string) => {
        texts.length = 0;
        const page = await seekStore.notifications.listWithTexts(env, { before, page: 100, limit: 10 });
        expect(page.data.map((event) => event._id)).toEqual(expected({ before }).slice(1000, 1010));
        return texts.filter((text) => text.includes('count(*)')).length;
      };
      try {
        // Second 80 holds no event; second 63 does (its rows at or above `before` are counted apart).
        expect(await countsOfSecond(at(80, 0))).toBe(0);
        expect(await countsOfSecond(at(63, 500))).toBe(1);
      } finally {
        prototype.all = all;
      }
    });

    it.skipIf(implementation.name !== 'SQLite')('reads as many more seconds as the last read says the rest of the offset needs', async () => {
      const probe = new BetterSqlite3(':memory:');
      const prototype = Object.getPrototypeOf(probe.prepare('select 1')) as { all: (...args: unknown[]) => unknown };
      probe.close();
      const all = prototype.all;
      const limits: number[] = [];
      prototype.all = function counted(this: { source: string }, ...args: unknown[]) {
        if (this.source.includes('notification_buckets')) limits.push(Number((args[0] as unknown[]).at(-1)));
        return all.apply(this, args);
      };
      const before = at(70, 0);
      const ids = expected({ before });
      const secondsRead = async (offset: number) => {
        limits.length = 0;
        const page = await seekStore.notifications.listWithTexts(env, { before, page: offset / 10, limit: 10 });
        expect(page.data.map((event) => event._id)).toEqual(ids.slice(offset, offset + 10));
        return [...limits];
      };
      try {
        // The first 8 seconds (60-65, 50-52 without the 56-59 gap) hold 1,860 events: offset 1,880 lies 20 rows below
        // them, in second 50, so the next read asks for 4 seconds (the least), not 32.
        expect(await secondsRead(1880)).toEqual([8, 4]);
        // Offset 1,950, in the sparse seconds below (one event each): 4 seconds (50, 39-37), then 8 at that read's rate,
        // then, after a read of one event a second, the rest at that rate, at most 32 a read.
        expect(await secondsRead(1950)).toEqual([8, 4, 8, 32, 28]);
      } finally {
        prototype.all = all;
      }
    });

    it.skipIf(implementation.name !== 'SQLite')('reads a page of a dense second from its tenth, walking at most that tenth\'s events', async () => {
      const probe = new BetterSqlite3(':memory:');
      const prototype = Object.getPrototypeOf(probe.prepare('select 1')) as { all: (...args: unknown[]) => unknown };
      probe.close();
      const all = prototype.all;
      const statements: Array<{ text: string; parameters: unknown[] }> = [];
      prototype.all = function counted(this: { source: string }, ...args: unknown[]) {
        statements.push({ text: this.source, parameters: args[0] as unknown[] });
        return all.apply(this, args);
      };
      const [{ most }] = await database.db
        .selectFrom('notification_tenths')
        .select(sql<number>`max(n)`.as('most'))
        .where('environment_id', '=', env)
        .execute() as [{ most: number }];
      const before = at(70, 0);
      const ids = expected({ before });
      try {
        // Pages 32-170 of 10 lie in seconds 60-65 (300 events each, ~30 a tenth): the page's statement skips fewer
        // rows than a tenth holds (by the second alone it skipped up to half the second's, ~150).
        for (const page of [40, 55, 71, 86, 99, 128, 150, 166]) {
          for (const store of [tenthStore, seekStore]) {
            statements.length = 0;
            const result = await store.notifications.listWithTexts(env, { before, page, limit: 10 });
            expect(result.data.map((event) => event._id)).toEqual(ids.slice(page * 10, page * 10 + 10));
            const tenths = statements.filter((statement) => statement.text.includes('notification_tenths'));
            const pageStatement = statements.find((statement) => / offset \?/.test(statement.text))!;
            const skipped = Number(pageStatement.parameters[pageStatement.parameters.length - 1]);
            // Where the second the page starts in holds a listed row below the page, hasMore is known from the second's
            // count and only the page's 10 rows are read; otherwise one more row, for hasMore.
            const second = (id: string) => rows.get(id)!.createdAt.slice(0, 19);
            const rowsRead = second(ids[page * 10]!) === second(ids[page * 10 + 10]!) ? 10 : 11;
            expect(result.hasMore).toBe(true);
            expect({ page, limit: Number(pageStatement.parameters[pageStatement.parameters.length - 2]) }).toEqual({ page, limit: rowsRead });
            if (store === tenthStore) {
              expect(tenths).toHaveLength(1);
              expect(skipped).toBeLessThan(Number(most));
            } else {
              // Below TENTHS_FROM_EVENTS a second (400) the seconds alone decide, as before 0033.
              expect(tenths).toHaveLength(0);
            }
          }
        }
      } finally {
        prototype.all = all;
      }
    });

    it('stays exact after deletes (oldest and in the middle), late inserts below the newest, and a moved event', async () => {
      const mine = expected({ before: at(99, 0) });
      const deleted = [...mine.slice(-25), ...mine.slice(400, 450), mine[0]!];
      await database.db.deleteFrom('notifications').where('id', 'in', deleted).execute();
      for (const id of deleted) rows.delete(id);
      // Written late, with times in the past: into a dense second, a sparse one, and an empty one.
      await insert([
        { id: newId(), environmentId: env, createdAt: at(61, 125) },
        { id: newId(), environmentId: env, createdAt: at(20, 500) },
        { id: newId(), environmentId: env, createdAt: at(57, 0) },
        { id: newId(), environmentId: other, createdAt: at(57, 0) },
      ]);
      const moved = mine[100]!;
      await database.db.updateTable('notifications').set({ created_at: at(45, 0) }).where('id', '=', moved).execute();
      rows.set(moved, { ...rows.get(moved)!, createdAt: at(45, 0) });
      await expectBucketsExact();
      await expectPages({ before: at(70, 0) }, offsets);
      await expectPages({ before: at(63, 500), after: at(20, 0) }, offsets);
    }, 120_000);

    it('does not list the writes of a transaction still open, which then rolls back', async () => {
      let written!: () => void;
      const wrote = new Promise<void>((resolve) => (written = resolve));
      const rolledBack = database.db
        .transaction()
        .execute(async (trx) => {
          await trx.insertInto('notifications').values(Array.from({ length: 40 }, (_, i) => ({
            id: newId(), environment_id: env, organization_id: 'org', subscriber_id: 'sub', external_subscriber_id: 'sub-1',
            subscriber_email: null, template_id: null, transaction_id: `tx-rolled-back-${i}`, digested_notification_id: null,
            channels_mask: 1, severity: null, context_keys_norm: '', document: '{}', created_at: at(64, i), updated_at: at(64, i),
          }))).execute();
          written();
          await new Promise((resolve) => setTimeout(resolve, 50));
          throw new Error('rolled back');
        })
        .catch((error: Error) => error.message);
      await wrote;
      // Started while the transaction is open (it holds 50 ms), on pages its rows would shift.
      const ids = expected({ before: at(70, 0) });
      const pages = await Promise.all(
        [30, 100, 150].flatMap((page) => [
          seekStore.notifications.list(env, { before: at(70, 0), page, limit: 10 }),
          seekStore.notifications.listWithTexts(env, { before: at(70, 0), page, limit: 10 }),
        ]),
      );
      expect(pages.map((result) => result.data.map((event) => event._id))).toEqual([30, 100, 150].flatMap((page) => [ids.slice(page * 10, page * 10 + 10), ids.slice(page * 10, page * 10 + 10)]));
      expect(await rolledBack).toBe('rolled back');
      await expectBucketsExact();
    }, 120_000);
  });
}
