// Preloaded into a Herald process by `npm run bench:http` (NODE_OPTIONS=--import ...): counts the round trips its
// drivers make, with no change to Herald itself. SQL statements: pg's Client#query (each is one round trip to
// PostgreSQL) and better-sqlite3's statement runs and execs (in-process calls, counted for comparison). Redis: every
// command ioredis sends (BullMQ's scripts included); commands of one pipeline or MULTI are also counted as one round
// trip. On SIGUSR2 the counts are written to $BENCH_ROUND_TRIPS_DIR/<pid>.json, so the bench reads them between phases.
import { createRequire } from 'node:module';
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { autocommitsWrite } from './sql-commit.mjs';

const require = createRequire(new URL('../../package.json', import.meta.url));
const counts = { sqlStatements: 0, sqlCommits: 0, redisCommands: 0, redisRoundTrips: 0, poolCheckouts: 0, poolWaits: 0, poolWaitMs: 0 };
// Event-loop delay since the last dump (reset at each): how long a ready callback waited for the loop, e.g. under 50
// connections. Sampled every 10 ms, as prom-client's default monitor.
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
const inTransaction = new WeakSet();
/** Puts the better-sqlite3 wrappers in or takes them out (set below when better-sqlite3 is installed). */
let setSqliteCounting = () => {};
let nextClientId = 0;

// PostgreSQL commits (what bounds its write rate: each waits for its WAL flush): explicit COMMITs, and writes sent
// outside a transaction (autocommitted; sql-commit.mjs: a read-only WITH is none). Counted for `npm run bench:scaling`.
function countCommit(client, query) {
  const text = typeof query === 'string' ? query : query?.text;
  if (typeof text !== 'string') return;
  if (/^\s*(begin|start transaction)\b/i.test(text)) inTransaction.add(client);
  else if (/^\s*(commit|end)\b/i.test(text)) { inTransaction.delete(client); counts.sqlCommits += 1; }
  else if (/^\s*rollback\b/i.test(text)) inTransaction.delete(client);
  else if (!inTransaction.has(client) && autocommitsWrite(text)) counts.sqlCommits += 1;
}

function wrap(prototype, name, count) {
  const original = prototype?.[name];
  if (typeof original !== 'function') return;
  prototype[name] = function counted(...args) {
    count(this, args);
    return original.apply(this, args);
  };
}

try {
  const pg = require('pg');
  // $BENCH_SQL_LOG names a file that gets each statement's text, one a line: which statements an operation makes.
  // With $BENCH_SQL_LOG_VALUES=1 each line is instead a JSON object with the connection and the values too, which
  // `npm run bench:pg-cost` replays to measure PostgreSQL's CPU per statement.
  const log = process.env.BENCH_SQL_LOG;
  const withValues = process.env.BENCH_SQL_LOG_VALUES === '1';
  const clientIds = new WeakMap();
  wrap(pg.Client.prototype, 'query', (client, [query, values]) => {
    counts.sqlStatements += 1;
    countCommit(client, query);
    const text = typeof query === 'string' ? query : query?.text;
    if (!log || typeof text !== 'string') return;
    if (!withValues) return appendFileSync(log, `${process.pid} ${text.replace(/\s+/g, ' ')}\n`);
    let id = clientIds.get(client);
    if (id === undefined) clientIds.set(client, (id = nextClientId++));
    const line = { pid: process.pid, client: id, named: typeof query !== 'string' && Boolean(query.name), text, values: (typeof query === 'string' ? values : query.values) ?? [] };
    appendFileSync(log, `${JSON.stringify(line)}\n`);
  });
  // Checkouts of a pg.Pool connection, and those that had to wait for one (every connection busy at the pool's max):
  // whether requests queue on the pool.
  const connect = pg.Pool.prototype.connect;
  pg.Pool.prototype.connect = function countedConnect(...args) {
    counts.poolCheckouts += 1;
    const full = this._idle.length === 0 && this._clients.length >= this.options.max;
    if (!full || args.length > 0) return connect.apply(this, args);
    counts.poolWaits += 1;
    const start = performance.now();
    const done = () => { counts.poolWaitMs += performance.now() - start; };
    const promise = connect.apply(this, args);
    promise.then(done, done);
    return promise;
  };
} catch { /* not installed: nothing to count */ }

try {
  const Database = require('better-sqlite3');
  const probe = new Database(':memory:');
  const statementPrototype = Object.getPrototypeOf(probe.prepare('select 1'));
  probe.close();
  const originals = [['run', statementPrototype], ['get', statementPrototype], ['all', statementPrototype], ['iterate', statementPrototype], ['exec', Database.prototype]]
    .map(([name, prototype]) => [prototype, name, prototype[name]]);
  for (const [prototype, name] of originals) wrap(prototype, name, () => (counts.sqlStatements += 1));
  const wrapped = originals.map(([prototype, name]) => [prototype, name, prototype[name]]);
  // better-sqlite3's calls are in-process and cheap, so the wrapper itself is a visible part of a list request (6-9 %
  // self time in session 16's profile). bench:http times its list loads with it taken out (the file `sqlite-off` in
  // $BENCH_ROUND_TRIPS_DIR when the counts are read) and counts their statements in a separate load.
  setSqliteCounting = (on) => {
    for (const [prototype, name, method] of on ? wrapped : originals) prototype[name] = method;
  };
} catch { /* not installed */ }

try {
  const { Redis, Pipeline } = require('ioredis');
  // A pipeline's commands reach sendCommand too (with the pipeline as their queue); they share one round trip.
  wrap(Redis.prototype, 'sendCommand', (redis, [command]) => {
    counts.redisCommands += 1;
    if (!command?.pipelineIndex && command?.pipelineIndex !== 0) counts.redisRoundTrips += 1;
  });
  wrap(Pipeline?.prototype, 'exec', () => (counts.redisRoundTrips += 1));
} catch { /* not installed */ }

// $BENCH_PROFILE_DIR (bench:http --profile <dir>): a CPU profile per phase, each read of the counts ending one
// (<pid>-<n>.cpuprofile) and starting the next.
const profileDir = process.env.BENCH_PROFILE_DIR;
let profiler;
let profileIndex = 0;
if (profileDir) {
  const { Session } = await import('node:inspector');
  profiler = new Session();
  profiler.connect();
  profiler.post('Profiler.enable', () => profiler.post('Profiler.setSamplingInterval', { interval: 200 }, () => profiler.post('Profiler.start')));
}
function nextProfile() {
  if (!profiler) return;
  const index = profileIndex++;
  profiler.post('Profiler.stop', (error, result) => {
    if (!error) writeFileSync(join(profileDir, `${process.pid}-${index}.cpuprofile`), JSON.stringify(result.profile));
    profiler.post('Profiler.start');
  });
}

const dir = process.env.BENCH_ROUND_TRIPS_DIR;
if (dir) {
  process.on('SIGUSR2', () => {
    const loop = { loopDelayP99Ms: loopDelay.percentile(99) / 1e6, loopDelayMaxMs: loopDelay.max / 1e6, loopDelayMeanMs: loopDelay.mean / 1e6 };
    loopDelay.reset();
    writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify({ ...counts, ...loop }));
    // After the counts are written: what follows until the next read runs with SQLite's statements counted or not.
    setSqliteCounting(!existsSync(join(dir, 'sqlite-off')));
    nextProfile();
  });
}
