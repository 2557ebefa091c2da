import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { newId } from '../../../src/domain/ids.js';
import type { Store, TriggerRecord } from '../../../src/store/ports.js';
import { SecretBox } from '../../../src/store/secret-box.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import { openTestPostgres, openTestSqlite, servicesAvailable, type TestSqlDatabase } from '../../helpers/databases.js';

/**
 * `triggers.create` under concurrency, on both databases. On PostgreSQL the inserts of concurrent triggers go out as
 * one statement (issue 24): each caller must still get its own answer (created, or the trigger that already holds
 * its transactionId), every row must read back exactly as written, and a row PostgreSQL refuses fails only its caller.
 */
const implementations = [
  { name: 'SQLite', available: true, open: openTestSqlite },
  { name: 'PostgreSQL', available: await servicesAvailable(['PostgreSQL']), open: openTestPostgres },
];

for (const implementation of implementations) {
  describe.skipIf(!implementation.available)(`triggers.create, concurrent, on ${implementation.name}`, () => {
    let database: TestSqlDatabase;
    let store: Store;
    let environmentId: string;
    let organizationId: string;
    // PostgreSQL: every statement the pool's connections run (installed before the first connection is made).
    let statements: MockInstance | undefined;

    beforeAll(async () => {
      if (implementation.name === 'PostgreSQL') statements = vi.spyOn(pg.Client.prototype, 'query');
      database = await implementation.open();
      store = new SqlStore(database.db, { dialect: database.dialect, secretBox: new SecretBox(randomBytes(32)) });
      const createdAt = new Date().toISOString();
      organizationId = newId();
      await store.tenancy.createOrganization({ _id: organizationId, name: 'Acme', createdAt });
      environmentId = newId();
      await store.tenancy.createEnvironment({ _id: environmentId, _organizationId: organizationId, name: 'development', createdAt });
    });
    afterAll(async () => {
      statements?.mockRestore();
      await database?.close();
    });

    const trigger = (transactionId: string, request: Record<string, unknown> = {}): TriggerRecord => {
      const now = new Date().toISOString();
      return { _id: newId(), environmentId, organizationId, transactionId, workflowId: 'welcome', request, state: 'accepted', createdAt: now, updatedAt: now };
    };

    it('stores every trigger of a burst as written, each caller told it created its own', async () => {
      const awkward = { to: ['a', { subscriberId: 'b "quoted" \\ back\\slash', firstName: 'Zoë 🙂' }], payload: { list: [1, null, '{x}', 'a,b'], empty: '' } };
      const burst = Array.from({ length: 25 }, (_, index) => trigger(`burst-${index}-${randomBytes(4).toString('hex')}`, { ...awkward, index }));
      const before = statements?.mock.calls.length ?? 0;
      const results = await Promise.all(burst.map((record) => store.triggers.create(record)));
      // PostgreSQL: one alone (nothing was in flight), the other 24 together.
      if (statements) expect(statements.mock.calls.length - before).toBe(2);
      results.forEach((result, index) => expect(result).toEqual({ trigger: burst[index], created: true }));
      for (const record of burst) expect(await store.triggers.get(environmentId, record._id)).toEqual(record);
    });

    it('answers a repeated transactionId in the same burst with the first trigger, creating it once', async () => {
      const first = trigger(`repeat-${randomBytes(4).toString('hex')}`, { n: 1 });
      const repeats = [first, trigger(first.transactionId, { n: 2 }), trigger(first.transactionId, { n: 3 })];
      const others = Array.from({ length: 5 }, (_, index) => trigger(`other-${index}-${randomBytes(4).toString('hex')}`));
      // Something in flight first, so the repeats go out together in one batch.
      const results = await Promise.all([store.triggers.create(others[0]!), ...repeats.map((record) => store.triggers.create(record)), ...others.slice(1).map((record) => store.triggers.create(record))]);
      const [, ...repeatResults] = results;
      expect(repeatResults.slice(0, 3).map((result) => result.created)).toEqual([true, false, false]);
      for (const result of repeatResults.slice(0, 3)) expect(result.trigger).toEqual(first);
      expect(results.filter((result) => result.created)).toHaveLength(1 + others.length);
      expect(await store.triggers.findByTransactionId(environmentId, first.transactionId)).toEqual(first);
      // An earlier trigger's transactionId, in a later burst.
      const later = await Promise.all([store.triggers.create(trigger(`x-${randomBytes(4).toString('hex')}`)), store.triggers.create(trigger(first.transactionId, { n: 4 }))]);
      expect(later[1]).toEqual({ trigger: first, created: false });
    });

    it.skipIf(implementation.name !== 'PostgreSQL')('fails only the caller whose row PostgreSQL refuses', async () => {
      const good = Array.from({ length: 6 }, (_, index) => trigger(`good-${index}-${randomBytes(4).toString('hex')}`));
      // PostgreSQL text cannot hold a NUL character: the batch statement fails, its rows are tried one by one.
      const bad = trigger('bad-\u0000-transaction');
      const settled = await Promise.allSettled([store.triggers.create(good[0]!), ...good.slice(1, 3).map((record) => store.triggers.create(record)), store.triggers.create(bad), ...good.slice(3).map((record) => store.triggers.create(record))]);
      expect(settled.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
      for (const record of good) expect(await store.triggers.get(environmentId, record._id)).toEqual(record);
      expect(await store.triggers.get(environmentId, bad._id)).toBeUndefined();
    });

    it('inside a transaction writes on the transaction, not beside it', async () => {
      const record = trigger(`tx-${randomBytes(4).toString('hex')}`);
      await expect(
        store.transaction(async (transaction) => {
          await Promise.all([transaction.triggers.create(record), transaction.triggers.create(trigger(`tx2-${randomBytes(4).toString('hex')}`))]);
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      expect(await store.triggers.get(environmentId, record._id)).toBeUndefined();
    });
  });
}
