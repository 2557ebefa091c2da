import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/domain/ids.js';
import { SecretBox } from '../../../src/store/secret-box.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import type { Store } from '../../../src/store/ports.js';
import { openTestPostgres, openTestSqlite, servicesAvailable, type TestSqlDatabase } from '../../helpers/databases.js';
import { buildMessage, buildSubscriber, createScope, type Scope } from '../../helpers/factories.js';

/**
 * The Store contract on every database: the same SqlStore over a SQLite file and a PostgreSQL schema
 * must read back exactly what it wrote (booleans as booleans, counts as numbers, nulls as nulls).
 * Each area's detailed behaviour is tested in its own suite; this one guards the dialect differences.
 */
const implementations = [
  { name: 'SQLite', available: true, open: openTestSqlite },
  { name: 'PostgreSQL', available: await servicesAvailable(['PostgreSQL']), open: openTestPostgres },
];

for (const implementation of implementations) {
  describe.skipIf(!implementation.available)(`Store contract: SqlStore on ${implementation.name}`, () => {
    let database: TestSqlDatabase;
    let store: Store;
    let scope: Scope;

    beforeAll(async () => {
      database = await implementation.open();
      store = new SqlStore(database.db, { dialect: database.dialect, secretBox: new SecretBox(randomBytes(32)) });
      scope = await createScope(store);
    });
    afterAll(async () => {
      await database?.close();
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it('lockKey makes a second transaction on the same key wait until the first ends', async () => {
      const order: string[] = [];
      let endFirst!: () => void;
      const firstMayEnd = new Promise<void>((resolve) => (endFirst = resolve));
      let firstLocked!: () => void;
      const locked = new Promise<void>((resolve) => (firstLocked = resolve));
      const first = store.transaction(async (transaction) => {
        await transaction.lockKey('digest-group-1');
        order.push('first locked');
        firstLocked();
        await firstMayEnd;
        order.push('first ends');
      });
      await locked;
      const second = store.transaction(async (transaction) => {
        await transaction.lockKey('digest-group-1');
        order.push('second locked');
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      endFirst();
      await Promise.all([first, second]);
      expect(order).toEqual(['first locked', 'first ends', 'second locked']);
    });

    it('stores tenancy records and keeps the first value of a setting', async () => {
      expect(await store.tenancy.getEnvironment(scope.environmentId)).toMatchObject({ _id: scope.environmentId, name: 'development' });
      expect((await store.tenancy.findEnvironmentByName('development'))?._id).toBe(scope.environmentId);
      await store.tenancy.createApiKey({ id: newId(), environmentId: scope.environmentId, keyHash: 'hash-abc', createdAt: new Date().toISOString() });
      expect(await store.tenancy.findApiKeyByHash('hash-abc')).toMatchObject({ environmentId: scope.environmentId, organizationId: scope.organizationId });
      expect(await store.tenancy.putSettingIfAbsent('contract.setting', 'first')).toBe('first');
      expect(await store.tenancy.putSettingIfAbsent('contract.setting', 'second')).toBe('first');
      expect(await store.tenancy.getSetting('contract.setting')).toBe('first');
    });

    it('reads a subscriber back exactly as written', async () => {
      const subscriber = buildSubscriber(scope, { isOnline: true, data: { plan: 'pro', seats: 3 }, channels: [], topics: [] });
      await store.subscribers.create(subscriber);
      expect(await store.subscribers.get(scope.environmentId, subscriber._id)).toEqual(subscriber);
      expect(await store.subscribers.findBySubscriberId(scope.environmentId, subscriber.subscriberId)).toEqual(subscriber);
      expect(await store.subscribers.get(newId(), subscriber._id)).toBeUndefined();
    });

    it('counts subscribers as numbers and pages them', async () => {
      const own = { ...scope, environmentId: newId() };
      await store.tenancy.createEnvironment({ _id: own.environmentId, _organizationId: own.organizationId, name: 'counted', createdAt: new Date().toISOString() });
      for (let i = 0; i < 3; i++) await store.subscribers.create(buildSubscriber(own, { email: `Person${i}@Example.com` }));
      const page = await store.subscribers.list(own.environmentId, { page: 0, limit: 2 });
      expect(page.data).toHaveLength(2);
      expect(page.totalCount).toBe(3);
      expect(typeof page.totalCount).toBe('number');
      expect(page.hasMore).toBe(true);
    });

    it('inserts one message per job, counts as numbers and applies mark-as', async () => {
      const subscriber = buildSubscriber(scope);
      await store.subscribers.create(subscriber);
      const message = buildMessage(subscriber);
      expect((await store.messages.create(message)).created).toBe(true);
      const again = await store.messages.create({ ...message, _id: newId() });
      expect(again.created).toBe(false);
      expect(again.message._id).toBe(message._id);

      const stored = await store.messages.get(scope.environmentId, message._id);
      expect(stored).toMatchObject({ _id: message._id, read: false, seen: false, channel: 'in_app', payload: { orderId: 42 } });

      const page = await store.messages.list(scope.environmentId, { transactionIds: [message.transactionId], page: 0, limit: 10 });
      expect(page.totalCount).toBe(1);
      expect(typeof page.totalCount).toBe('number');

      const [marked] = await store.messages.markAs(scope.environmentId, [message._id], 'read', new Date().toISOString());
      expect(marked).toMatchObject({ _id: message._id, read: true, seen: true });
      expect(typeof (await store.messages.get(scope.environmentId, message._id))?.read).toBe('boolean');
    });

    it('rolls back everything written in a failed transaction', async () => {
      const subscriber = buildSubscriber(scope);
      await expect(
        store.transaction(async (inner) => {
          await inner.subscribers.create(subscriber);
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      expect(await store.subscribers.get(scope.environmentId, subscriber._id)).toBeUndefined();
    });
  });
}
