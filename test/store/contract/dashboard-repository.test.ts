import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlDashboardRepository } from '../../../src/store/sql/dashboard-repository.js';
import type { StoredUser } from '../../../src/domain/dashboard.js';
import { newId } from '../../../src/domain/ids.js';
import { openTestPostgres, openTestSqlite, servicesAvailable, type TestSqlDatabase } from '../../helpers/databases.js';

/** The dashboard repository's guarantees on both databases: single-use tokens under concurrency, unique emails, expiry. */
const implementations = [
  { name: 'SQLite', available: true, open: () => openTestSqlite() },
  { name: 'PostgreSQL', available: await servicesAvailable(['PostgreSQL']), open: () => openTestPostgres() },
];

const now = () => new Date().toISOString();
const later = (ms: number) => new Date(Date.now() + ms).toISOString();

function user(overrides: Partial<StoredUser> = {}): StoredUser {
  const at = now();
  return { _id: newId(), _organizationId: 'org', email: `${newId()}@example.com`, role: 'viewer', passwordHash: 'scrypt$x', createdAt: at, updatedAt: at, ...overrides };
}

for (const implementation of implementations) {
  describe.skipIf(!implementation.available)(`dashboard repository on ${implementation.name}`, () => {
    let database: TestSqlDatabase;
    let repository: SqlDashboardRepository;
    beforeAll(async () => {
      database = await implementation.open();
      repository = new SqlDashboardRepository(database.db);
    });
    afterAll(async () => database?.close());

    it('lets exactly one of many concurrent uses of a token succeed', async () => {
      const tokenHash = newId();
      await repository.createToken({ _id: newId(), tokenHash, kind: 'invite', organizationId: 'org', role: 'viewer', createdAt: now(), expiresAt: later(60_000) });
      const results = await Promise.all(Array.from({ length: 8 }, () => repository.consumeToken(tokenHash, 'invite', now())));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await repository.consumeToken(tokenHash, 'invite', now())).toBeUndefined();
    });

    it('never consumes an expired, revoked or other-kind token', async () => {
      const expired = newId();
      await repository.createToken({ _id: newId(), tokenHash: expired, kind: 'setup', createdAt: now(), expiresAt: later(-1) });
      expect(await repository.consumeToken(expired, 'setup', now())).toBeUndefined();
      const setup = newId();
      await repository.createToken({ _id: newId(), tokenHash: setup, kind: 'setup', createdAt: now(), expiresAt: later(60_000) });
      expect(await repository.consumeToken(setup, 'invite', now())).toBeUndefined();
      const inviteId = newId();
      const invite = newId();
      await repository.createToken({ _id: inviteId, tokenHash: invite, kind: 'invite', organizationId: 'org', role: 'admin', createdAt: now(), expiresAt: later(60_000) });
      expect(await repository.revokeInvite('other-org', inviteId, now())).toBe(false);
      expect(await repository.revokeInvite('org', inviteId, now())).toBe(true);
      expect(await repository.consumeToken(invite, 'invite', now())).toBeUndefined();
    });

    it('keeps emails unique across organizations and finds sessions only until they expire', async () => {
      const first = user({ email: 'same@example.com' });
      expect(await repository.createUser(first)).toBe(true);
      expect(await repository.createUser(user({ email: 'same@example.com', _organizationId: 'other' }))).toBe(false);
      await repository.createSession({ tokenHash: 'live', userId: first._id, createdAt: now(), expiresAt: later(60_000) });
      await repository.createSession({ tokenHash: 'old', userId: first._id, createdAt: now(), expiresAt: later(-1) });
      expect((await repository.findSession('live', now()))?.user.email).toBe('same@example.com');
      expect(await repository.findSession('old', now())).toBeUndefined();
      expect(await repository.deleteUser('other', first._id)).toBe(false);
      expect(await repository.deleteUser('org', first._id)).toBe(true);
      expect(await repository.findSession('live', now())).toBeUndefined();
    });

    it('counts sign-in attempts per key and window', async () => {
      const window = now();
      expect(await repository.countLoginAttempt('email:x', window)).toBe(1);
      expect(await repository.countLoginAttempt('email:x', window)).toBe(2);
      expect(await repository.countLoginAttempt('ip:y', window)).toBe(1);
      await repository.clearLoginAttempts('email:x');
      expect(await repository.countLoginAttempt('email:x', window)).toBe(1);
    });
  });
}
