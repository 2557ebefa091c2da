import { randomBytes } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { ValidationError } from '../domain/errors.js';
import { serializeMessagePage } from '../http/message-page-serializer.js';
import { serializeNotificationPage } from '../http/notification-page-serializer.js';
import { SecretBox } from '../store/secret-box.js';
import { SqlStore } from '../store/sql/sql-store.js';
import { openSqliteReader } from '../store/sqlite/connection.js';
import { listMessages } from '../usecases/messages/list-messages.js';
import { listNotifications } from '../usecases/notifications/list-notifications.js';
import type { PageAnswer, PageRequest, ReaderThreadData } from './protocol.js';

/**
 * A reader thread (see reader-pool.ts): its own read-only store over the database file, the same use cases and page
 * serializers as the routes, one page per request. It holds no cache that a write could make stale: the store's only
 * one on these paths is the workflow snapshots' texts, which are content-addressed (template-snapshots.ts).
 */
const data = workerData as ReaderThreadData;
const port = parentPort!;
const db = openSqliteReader(data.file);
// The lists decrypt nothing; a store needs a box, so this one has a key of its own that opens nothing stored.
const store = new SqlStore(db, { dialect: 'sqlite', secretBox: new SecretBox(randomBytes(32)) });
const config = { activityRetentionDays: data.activityRetentionDays };
const encoder = new TextEncoder();

async function pageOf(request: PageRequest): Promise<string> {
  if (request.op === 'messages') return serializeMessagePage(await listMessages({ store }, request.input));
  const now = request.now;
  return serializeNotificationPage(await listNotifications({ store, config, clock: { now: () => now } }, request.input));
}

// The answers of one turn go back together, in one message (as the requests come: reader-pool.ts).
let answers: PageAnswer[] = [];
let transfers: ArrayBuffer[] = [];
function flush(): void {
  port.postMessage(answers, transfers);
  answers = [];
  transfers = [];
}
function answer(reply: PageAnswer, transfer?: ArrayBuffer): void {
  if (answers.push(reply) === 1) setImmediate(flush);
  if (transfer) transfers.push(transfer);
}

function written(request: PageRequest, text: string): void {
  // Its own ArrayBuffer (not a slice of Buffer's shared pool), so it can be transferred.
  const body = encoder.encode(text);
  answer({ id: request.id, body }, body.buffer as ArrayBuffer);
}

port.on('message', (message: PageRequest[] | 'stop') => {
  if (message === 'stop') {
    void db.destroy().finally(() => port.close());
    return;
  }
  for (const request of message) {
    pageOf(request).then(
      (text) => written(request, text),
      (error: unknown) => answer(error instanceof ValidationError ? { id: request.id, validation: error.messages } : { id: request.id, retry: String(error) }),
    );
  }
});
// Loaded and connected: from now on the pool counts an unanswered page's wait against the thread (reader-pool.ts).
port.postMessage('ready');
