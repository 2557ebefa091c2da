import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/domain/ids.js';
import type { Subscriber } from '../../../src/domain/types.js';
import { SecretBox } from '../../../src/store/secret-box.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import { openTestPostgres, openTestSqlite, servicesAvailable, type TestSqlDatabase } from '../../helpers/databases.js';
import { buildSubscriber, type Scope } from '../../helpers/factories.js';

/**
 * `subscribers.create` returns the record as `get` reads it back, which the trigger's first step uses instead of
 * reading it again (issue 24): it must be exactly that record, or nothing.
 */
const implementations = [
  { name: 'SQLite', available: true, open: openTestSqlite },
  { name: 'PostgreSQL', available: await servicesAvailable(['PostgreSQL']), open: openTestPostgres },
];

for (const implementation of implementations) {
  describe.skipIf(!implementation.available)(`subscribers.create on ${implementation.name}`, () => {
    let database: TestSqlDatabase;
    let store: SqlStore;
    let scope: Scope;
    beforeAll(async () => {
      database = await implementation.open();
      store = new SqlStore(database.db, { dialect: database.dialect, secretBox: new SecretBox(randomBytes(32)) });
      scope = { environmentId: newId(), organizationId: newId() };
    });
    afterAll(async () => database?.close());

    it('returns what get reads back, for a bare subscriberId and for a full profile', async () => {
      const bare = buildSubscriber(scope, { firstName: undefined, lastName: undefined, email: undefined, phone: undefined, locale: undefined, timezone: undefined, avatar: undefined, isOnline: undefined, lastOnlineAt: undefined, data: undefined } as Partial<Subscriber>);
      const full = buildSubscriber(scope, { data: { plan: 'pro', nested: { b: 1, a: [true, null] } }, isOnline: true, lastOnlineAt: new Date().toISOString() });
      for (const subscriber of [bare, full]) {
        const returned = await store.subscribers.create(subscriber);
        expect(returned).toBeDefined();
        expect(JSON.stringify(returned)).toBe(JSON.stringify(await store.subscribers.get(scope.environmentId, subscriber._id)));
      }
    });

    it('returns nothing when a text field was given another type (the database converts it)', async () => {
      const subscriber = buildSubscriber(scope, { phone: 15550100 as unknown as string });
      expect(await store.subscribers.create(subscriber)).toBeUndefined();
      // SQLite reads '15550100.0', PostgreSQL '15550100': either way not the number the record held.
      expect(typeof (await store.subscribers.get(scope.environmentId, subscriber._id))?.phone).toBe('string');
    });
  });
}
