import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { newId } from '../../../src/domain/ids.js';
import type { Store, TriggerRecord } from '../../../src/store/ports.js';
import { SecretBox } from '../../../src/store/secret-box.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import { openTestPostgres, openTestSqlite, servicesAvailable, type TestSqlDatabase } from '../../helpers/databases.js';
import { buildSubscriber } from '../../helpers/factories.js';

/**
 * `triggers.get` and `subscribers.findBySubscriberId` under concurrency, on both databases. On PostgreSQL the reads
 * made while one is in flight go out together as one statement (issue 24, session 18, the subscriber reads undone in
 * session 19 for their plan and back in session 20 with migration 0037: the scaled-out worker's
 * concurrent jobs each start with these two reads): each caller must still get its own row, never one of another
 * environment or a deleted subscriber, and never a row older than what was committed before its call (a read waits
 * only for the one in flight, so it runs after it was asked for).
 */
const implementations = [
  { name: 'SQLite', available: true, open: openTestSqlite },
  { name: 'PostgreSQL', available: await servicesAvailable(['PostgreSQL']), open: openTestPostgres },
];

for (const implementation of implementations) {
  describe.skipIf(!implementation.available)(`concurrent reads by key on ${implementation.name}`, () => {
    let database: TestSqlDatabase;
    let store: Store;
    const organizationId = newId();
    const environmentId = newId();
    const otherEnvironmentId = newId();
    let statements: MockInstance | undefined;

    beforeAll(async () => {
      if (implementation.name === 'PostgreSQL') statements = vi.spyOn(pg.Client.prototype, 'query');
      database = await implementation.open();
      store = new SqlStore(database.db, { dialect: database.dialect, secretBox: new SecretBox(randomBytes(32)) });
      const createdAt = new Date().toISOString();
      await store.tenancy.createOrganization({ _id: organizationId, name: 'Acme', createdAt });
      for (const id of [environmentId, otherEnvironmentId]) await store.tenancy.createEnvironment({ _id: id, _organizationId: organizationId, name: id, createdAt });
    });
    afterAll(async () => {
      statements?.mockRestore();
      await database?.close();
    });

    const trigger = (env: string, index: number): TriggerRecord => {
      const now = new Date().toISOString();
      return { _id: newId(), environmentId: env, organizationId, transactionId: `read-${index}-${newId()}`, workflowId: 'welcome', request: { index }, state: 'accepted', createdAt: now, updatedAt: now };
    };
    const counted = async <T>(run: () => Promise<T>): Promise<{ result: T; statements: number }> => {
      const before = statements?.mock.calls.length ?? 0;
      const result = await run();
      return { result, statements: (statements?.mock.calls.length ?? 0) - before };
    };

    it('answers each trigger read of a burst with its own trigger, none of another environment', async () => {
      const mine = Array.from({ length: 20 }, (_, index) => trigger(environmentId, index));
      const other = trigger(otherEnvironmentId, 99);
      for (const record of [...mine, other]) await store.triggers.create(record);
      const asked = [...mine.map((record) => ({ env: environmentId, id: record._id })), { env: environmentId, id: other._id }, { env: environmentId, id: newId() }];
      const { result, statements: sent } = await counted(() => Promise.all(asked.map(({ env, id }) => store.triggers.get(env, id))));
      // PostgreSQL: the first alone (nothing was in flight), the other 21 together.
      if (statements) expect(sent).toBe(2);
      expect(result).toEqual([...mine, undefined, undefined]);
    });

    it('sees a trigger state written before the read was asked for', async () => {
      const record = trigger(environmentId, 1);
      await store.triggers.create(record);
      const first = store.triggers.get(environmentId, record._id);
      await store.triggers.setState(environmentId, record._id, 'processed');
      const [before, after] = await Promise.all([first, store.triggers.get(environmentId, record._id)]);
      expect(after?.state).toBe('processed');
      expect(['accepted', 'processed']).toContain(before?.state);
    });

    it('answers each subscriber read of a burst with its own live subscriber', async () => {
      const scope = { environmentId, organizationId };
      const mine = Array.from({ length: 10 }, (_, index) => buildSubscriber(scope, { subscriberId: `reader-${index}` }));
      for (const subscriber of mine) await store.subscribers.create(subscriber);
      const elsewhere = buildSubscriber({ environmentId: otherEnvironmentId, organizationId }, { subscriberId: 'only-elsewhere' });
      await store.subscribers.create(elsewhere);
      const removed = buildSubscriber(scope, { subscriberId: 'removed' });
      await store.subscribers.create(removed);
      await store.subscribers.delete(environmentId, removed._id, new Date().toISOString());
      const asked = [...mine.map((subscriber) => subscriber.subscriberId), 'only-elsewhere', 'removed', 'never-created'];
      const { result, statements: sent } = await counted(() => Promise.all(asked.map((subscriberId) => store.subscribers.findBySubscriberId(environmentId, subscriberId))));
      if (statements) expect(sent).toBe(2);
      expect(result.map((subscriber) => subscriber?._id)).toEqual([...mine.map((subscriber) => subscriber._id), undefined, undefined, undefined]);
      expect(result[3]).toEqual(await store.subscribers.get(environmentId, mine[3]!._id));
      expect(await store.subscribers.findBySubscriberId(otherEnvironmentId, 'only-elsewhere')).toMatchObject({ _id: elsewhere._id });
    });
  });
}
