import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/domain/ids.js';
import type { WebhookAttempt } from '../../../src/domain/webhooks.js';
import { SecretBox } from '../../../src/store/secret-box.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import type { Store } from '../../../src/store/ports.js';
import { openTestPostgres, openTestSqlite, servicesAvailable, type TestSqlDatabase } from '../../helpers/databases.js';

/** The webhook attempt log's batched outcome write (finishAttempts) on both databases. */
const implementations = [
  { name: 'SQLite', available: true, open: openTestSqlite },
  { name: 'PostgreSQL', available: await servicesAvailable(['PostgreSQL']), open: openTestPostgres },
];

function pending(environmentId: string, endpointId: string, attempt = 1): WebhookAttempt {
  const now = new Date().toISOString();
  return {
    _id: newId(),
    _environmentId: environmentId,
    _endpointId: endpointId,
    webhookId: newId(),
    eventType: 'message.sent',
    attempt,
    status: 'pending',
    durationMs: 0,
    responseBodySnippet: '',
    dueAt: now,
    createdAt: now,
  };
}

for (const implementation of implementations) {
  describe.skipIf(!implementation.available)(`webhook attempts on ${implementation.name}`, () => {
    let database: TestSqlDatabase;
    let store: Store;
    const environmentId = newId();
    const endpointId = newId();

    beforeAll(async () => {
      database = await implementation.open();
      store = new SqlStore(database.db, { dialect: database.dialect, secretBox: new SecretBox(randomBytes(32)) });
    });
    afterAll(async () => {
      await database?.close();
    });

    it('writes the outcomes of many pending attempts at once, each its own, and answers their ids', async () => {
      const attempts = Array.from({ length: 620 }, () => pending(environmentId, endpointId));
      await store.webhooks.createAttempts(attempts);
      const finishedAt = new Date().toISOString();
      const outcomes: WebhookAttempt[] = attempts.map((attempt, i) =>
        i % 2 === 0
          ? { ...attempt, status: 'success', responseStatusCode: 204, durationMs: i, responseBodySnippet: '', finishedAt }
          : { ...attempt, status: 'failed', durationMs: i, responseBodySnippet: `down ${i}`, error: i % 3 === 0 ? `timeout ${i}` : undefined, finishedAt },
      );
      const written = await store.webhooks.finishAttempts(outcomes);
      expect(new Set(written)).toEqual(new Set(attempts.map((a) => a._id)));
      for (const i of [0, 1, 3, 500, 619]) {
        const stored = await store.webhooks.getAttempt(environmentId, attempts[i]._id);
        const expected: WebhookAttempt = { ...outcomes[i] };
        if (expected.error === undefined) delete expected.error;
        expect(stored).toEqual(expected);
      }
      expect(await store.webhooks.listOverdueAttempts(new Date(Date.now() + 60_000).toISOString(), 1000)).toEqual([]);
    });

    it('leaves an attempt another run already finished alone, and leaves it out of the answer', async () => {
      const first = pending(environmentId, endpointId);
      const second = pending(environmentId, endpointId);
      await store.webhooks.createAttempts([first, second]);
      const finishedAt = new Date().toISOString();
      expect(await store.webhooks.finishAttempts([{ ...first, status: 'success', responseStatusCode: 200, finishedAt }])).toEqual([first._id]);
      const late = await store.webhooks.finishAttempts([
        { ...first, status: 'failed', responseStatusCode: 503, responseBodySnippet: 'late', finishedAt },
        { ...second, status: 'failed', responseStatusCode: 503, responseBodySnippet: 'down', finishedAt },
      ]);
      expect(late).toEqual([second._id]);
      expect(await store.webhooks.getAttempt(environmentId, first._id)).toMatchObject({ status: 'success', responseStatusCode: 200, responseBodySnippet: '' });
      expect(await store.webhooks.getAttempt(environmentId, second._id)).toMatchObject({ status: 'failed', responseStatusCode: 503, responseBodySnippet: 'down' });
    });
  });
}
