import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';

/**
 * `node --import tsx bench/detail-writes.ts [rounds] [seeded events]` (issue 24, session 23): the SQLite cost of the
 * execution details a drain writes, before migration 0039 (a rowid table, its id index and execution_details_notification)
 * and after (one b-tree keyed (notification_id, id), WITHOUT ROWID), in one process, rounds alternating A B B A. A round is
 * one group commit as the embedded drain makes them: 32 new events' "Step created" and "Step queued" details and the
 * "Message sent" details of 32 events triggered 2,000 events earlier, one multi-row insert each, then COMMIT, in WAL
 * mode with synchronous = NORMAL (Herald's pragmas). Prints CPU µs per detail and WAL bytes per round for each schema.
 */
const rounds = Number(process.argv[2] ?? 400);
const seeded = Number(process.argv[3] ?? 200_000);
const LAG = 2_000;
const GROUP = 32;

const columns = `id text not null, environment_id text not null, job_id text not null, notification_id text not null, status text not null,
  detail text not null, is_retry integer not null default 0, is_test integer not null default 0, provider_id text, raw text, source text not null,
  created_at text not null`;
const schemas = {
  A: [
    `create table execution_details (${columns.replace('id text not null,', 'id text primary key,')})`,
    'create index execution_details_notification on execution_details (notification_id)',
  ],
  B: [`create table execution_details (${columns}, constraint execution_details_pk primary key (notification_id, id)) without rowid`],
};

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
const second = (event: number) => hex(1694498816 + Math.floor(event / 1000), 8);
const eventId = (event: number) => second(event) + hex(event, 16);
const detail = (event: number, step: number, status: string, text: string, provider: string | null) => [
  second(event) + String(step) + hex(event, 15),
  '0194d6f0a1b2c3d4e5f60718',
  'a' + hex(event, 23),
  eventId(event),
  status,
  text,
  0,
  0,
  provider,
  null,
  'Internal',
  new Date((1694498816 + event / 1000) * 1000).toISOString(),
];

function open(name: 'A' | 'B') {
  const dir = mkdtempSync(join(tmpdir(), `detail-writes-${name}-`));
  const db = new BetterSqlite3(join(dir, 'herald.sqlite'));
  db.pragma('auto_vacuum = INCREMENTAL');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('wal_autocheckpoint = 10000');
  db.exec('create table notification_texts (notification_id text primary key, environment_id text not null, text text not null)');
  for (const statement of schemas[name]) db.exec(statement);
  for (const [when, row] of [['insert', 'new'], ['delete', 'old']] as const) {
    db.exec(`create trigger t_${when} after ${when} on execution_details begin delete from notification_texts where notification_id = ${row}.notification_id; end`);
  }
  const placeholders = (n: number) => Array.from({ length: n }, () => `(${Array(12).fill('?').join(', ')})`).join(', ');
  const insertTriggered = db.prepare(`insert into execution_details values ${placeholders(2 * GROUP)}`);
  const insertDelivered = db.prepare(`insert into execution_details values ${placeholders(GROUP)}`);
  let next = 1;
  const writeGroup = () => {
    const triggered: unknown[] = [];
    const delivered: unknown[] = [];
    for (let i = 0; i < GROUP; i++, next++) {
      triggered.push(...detail(next, 1, 'Pending', 'Step created', null), ...detail(next, 2, 'Queued', 'Step queued', null));
      // The first LAG events' deliveries stand in for events triggered before the seed (ids of their own).
      delivered.push(...detail(next > LAG ? next - LAG : 1_000_000_000 + next, 3, 'Success', 'Message sent to the subscriber inbox', 'novu'));
    }
    db.exec('begin');
    insertTriggered.run(triggered);
    insertDelivered.run(delivered);
    db.exec('commit');
  };
  while (next <= seeded) writeGroup();
  db.pragma('wal_checkpoint(TRUNCATE)');
  return { db, dir, writeGroup };
}

const stores = { A: open('A'), B: open('B') };
const totals = { A: { cpu: 0, rounds: 0 }, B: { cpu: 0, rounds: 0 } };
stores.A.db.pragma('wal_autocheckpoint = 0');
stores.B.db.pragma('wal_autocheckpoint = 0');
stores.A.db.pragma('wal_checkpoint(TRUNCATE)');
stores.B.db.pragma('wal_checkpoint(TRUNCATE)');
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? (['A', 'B', 'B', 'A'] as const) : (['B', 'A', 'A', 'B'] as const);
  for (const name of order) {
    const started = process.cpuUsage();
    stores[name].writeGroup();
    const used = process.cpuUsage(started);
    totals[name].cpu += used.user + used.system;
    totals[name].rounds++;
  }
}
const result: Record<string, unknown> = {};
for (const name of ['A', 'B'] as const) {
  const walFrames = Number((stores[name].db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number }>)[0]!.log);
  const details = totals[name].rounds * GROUP * 3;
  result[name] = {
    groups: totals[name].rounds,
    cpuMicrosPerDetail: Number((totals[name].cpu / details).toFixed(2)),
    walPagesPerDelivery: Number((walFrames / (totals[name].rounds * GROUP)).toFixed(3)),
    pages: Object.fromEntries(
      (stores[name].db.prepare("select name, count(*) as pages from dbstat where name like 'execution%' or name like 'sqlite_auto%' group by name").all() as Array<{
        name: string;
        pages: number;
      }>).map((row) => [row.name, row.pages]),
    ),
  };
  stores[name].db.close();
  rmSync(stores[name].dir, { recursive: true, force: true });
}
console.log(JSON.stringify({ rounds, seeded, ...result }));
