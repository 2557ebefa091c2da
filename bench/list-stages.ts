import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { createContainer } from '../src/container.js';
import { buildApp } from '../src/http/app.js';
import { authenticateCaller } from '../src/usecases/auth/authenticate-caller.js';
import { listNotifications } from '../src/usecases/notifications/list-notifications.js';
import { listMessages } from '../src/usecases/messages/list-messages.js';
import { serializeNotificationPage } from '../src/http/notification-page-serializer.js';
import { serializeMessagePage } from '../src/http/message-page-serializer.js';
import { BENCH_SECRET } from './lib/bench-client.js';

/**
 * `node --import tsx bench/list-stages.ts <keptDataDir> [rounds] > /dev/null` (results on stderr; stdout gets the
 * request lines): where one list request's CPU goes, in process, on a copy of a kept data set
 * (bench/kept-lists-seed.ts), over bench:http's pages in turn: the auth use-case, the list use-case (store reads),
 * the page's serializer, its encoding to bytes, and the whole request through `app.inject` (every hook, the
 * validation, the handler; no socket). CPU µs per call (process.cpuUsage over the pages), events and messages
 * alternated; the last rounds counted.
 */
const kept = process.argv[2]!;
const rounds = Number(process.argv[3] ?? 4);
const dataDir = mkdtempSync(join(tmpdir(), 'herald-stages-'));
cpSync(kept, dataDir, { recursive: true });
const config = loadConfig({ HERALD_DATA_DIR: dataDir, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', HERALD_METRICS: 'true' });
const container = await createContainer(config);
const { deps } = container;
const app = await buildApp(deps, { logger: deps.logger, realtime: container.realtime });
const authorization = `ApiKey ${BENCH_SECRET}`;
const caller = await authenticateCaller(deps, authorization);
const eventPages = Array.from({ length: 2000 }, (_, page) => page);
const messageQueries = Array.from({ length: 300 }, (_, i) => `list-kept-${i}`).flatMap((id) => [0, 1].map((page) => ({ id, page })));

async function timed(name: string, count: number, run: (i: number) => Promise<unknown> | unknown): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < count; i++) await run(i);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / count;
}

const results: Record<string, number[]> = {};
const note = (name: string, us: number) => (results[name] ??= []).push(Math.round(us * 10) / 10);
const eventPageOf = (i: number) => listNotifications(deps, { caller, page: eventPages[i % 2000]!, limit: 10 });
const messagePageOf = (i: number) => { const q = messageQueries[i % 600]!; return listMessages(deps, { caller, subscriberId: q.id, page: q.page, limit: 10 }); };
const eventPagesRead = await Promise.all(eventPages.map((_, i) => eventPageOf(i)));
const messagePagesRead: Array<Awaited<ReturnType<typeof listMessages>>> = [];
for (let i = 0; i < 600; i++) messagePagesRead.push(await messagePageOf(i));

for (let round = 0; round < rounds; round++) {
  const count = 2000;
  for (const kind of round % 2 === 0 ? ['events', 'messages'] : ['messages', 'events']) {
    if (kind === 'events') {
      note('events: inject', await timed('inject', count, (i) => app.inject({ method: 'GET', url: `/v1/notifications?limit=10&page=${i % 2000}`, headers: { authorization } })));
      note('events: use-case', await timed('use-case', count, eventPageOf));
      note('events: serialize', await timed('serialize', count, (i) => serializeNotificationPage(eventPagesRead[i % 2000]!)));
      note('events: bytes', await timed('bytes', count, (i) => Buffer.from(serializeNotificationPage(eventPagesRead[i % 2000]!))));
    } else {
      note('messages: inject', await timed('inject', count, (i) => { const q = messageQueries[i % 600]!; return app.inject({ method: 'GET', url: `/v1/messages?subscriberId=${q.id}&limit=10&page=${q.page}`, headers: { authorization } }); }));
      note('messages: use-case', await timed('use-case', count, messagePageOf));
      note('messages: serialize', await timed('serialize', count, (i) => serializeMessagePage(messagePagesRead[i % 600]!)));
      note('messages: bytes', await timed('bytes', count, (i) => Buffer.from(serializeMessagePage(messagePagesRead[i % 600]!))));
    }
    note(`${kind}: auth`, await timed('auth', count, () => authenticateCaller(deps, authorization)));
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [name, values] of Object.entries(results)) process.stderr.write(`${name.padEnd(22)} median ${median(values.slice(1))} µs  rounds ${values.join(' / ')}\n`);
await app.close();
await container.close();
rmSync(dataDir, { recursive: true, force: true });
