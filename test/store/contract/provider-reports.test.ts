import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/domain/ids.js';
import { SecretBox } from '../../../src/store/secret-box.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import type { Store } from '../../../src/store/ports.js';
import { openTestPostgres, openTestSqlite, servicesAvailable, type TestSqlDatabase } from '../../helpers/databases.js';
import { buildMessage, buildSubscriber, type Scope } from '../../helpers/factories.js';

/** The store side of provider delivery reports (migration 0021) on both databases. */
const implementations = [
  { name: 'SQLite', available: true, open: openTestSqlite },
  { name: 'PostgreSQL', available: await servicesAvailable(['PostgreSQL']), open: openTestPostgres },
];

for (const implementation of implementations) {
  describe.skipIf(!implementation.available)(`provider reports on ${implementation.name}`, () => {
    let database: TestSqlDatabase;
    let store: Store;
    let scope: Scope;
    let otherScope: Scope;

    beforeAll(async () => {
      database = await implementation.open();
      store = new SqlStore(database.db, { dialect: database.dialect, secretBox: new SecretBox(randomBytes(32)) });
      const createdAt = new Date().toISOString();
      const organization = { _id: newId(), name: 'Acme', createdAt };
      await store.tenancy.createOrganization(organization);
      for (const name of ['development', 'production']) {
        const environment = { _id: newId(), _organizationId: organization._id, name, createdAt };
        await store.tenancy.createEnvironment(environment);
        const current = { environmentId: environment._id, organizationId: organization._id };
        if (name === 'development') scope = current;
        else otherScope = current;
      }
    });
    afterAll(async () => {
      await database?.close();
    });

    it('finds a message by its vendor id, in its own environment only, the first given id winning; a retry save keeps the new id', async () => {
      const subscriber = buildSubscriber(scope);
      await store.subscribers.create(subscriber);
      const sent = buildMessage(subscriber, { channel: 'email', identifier: 'vendor-1', status: 'sent' });
      const plain = buildMessage(subscriber, { channel: 'in_app' });
      await store.messages.create(sent);
      await store.messages.create(plain);
      expect((await store.messages.findByIdentifier(scope.environmentId, ['nope', 'vendor-1']))?._id).toBe(sent._id);
      expect((await store.messages.findByIdentifier(scope.environmentId, ['vendor-1']))?.identifier).toBe('vendor-1');
      expect(await store.messages.findByIdentifier(otherScope.environmentId, ['vendor-1'])).toBeUndefined();
      expect(await store.messages.findByIdentifier(scope.environmentId, [])).toBeUndefined();

      await store.messages.save({ ...sent, identifier: 'vendor-2', providerStatus: 'delivered' });
      expect(await store.messages.findByIdentifier(scope.environmentId, ['vendor-1'])).toBeUndefined();
      expect(await store.messages.findByIdentifier(scope.environmentId, ['vendor-2'])).toMatchObject({ _id: sent._id, providerStatus: 'delivered' });
    });

    it('claims a vendor event id once per environment and integration', async () => {
      const at = new Date().toISOString();
      const integrationId = newId();
      expect(await store.providerReports.claim(scope.environmentId, integrationId, 'ev-1', at)).toBe(true);
      expect(await store.providerReports.claim(scope.environmentId, integrationId, 'ev-1', at)).toBe(false);
      expect(await store.providerReports.claim(scope.environmentId, newId(), 'ev-1', at)).toBe(true);
      expect(await store.providerReports.claim(otherScope.environmentId, integrationId, 'ev-1', at)).toBe(true);
      // A claim rolled back with its transaction is not kept.
      await expect(
        store.transaction(async (transaction) => {
          await transaction.providerReports.claim(scope.environmentId, integrationId, 'ev-2', at);
          throw new Error('change failed');
        }),
      ).rejects.toThrow('change failed');
      expect(await store.providerReports.claim(scope.environmentId, integrationId, 'ev-2', at)).toBe(true);
    });
  });
}
