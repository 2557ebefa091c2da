// SPIKE (issue 24, session 26, h/emb-split): preloaded into the Herald processes of `bench:http --spike-drains <n>`
// (before round-trip-counter.mjs, whose on/off switch then keeps this wrapper). Times, on the main thread, every
// better-sqlite3 `exec('begin immediate')` (the group commit's start: where a connection waits, synchronously, in
// SQLite's busy handler while another process holds the write lock) and every `exec('commit')`, and writes the sums to
// $BENCH_BUSY_DIR/<pid>.json every 50 ms and at exit. Without another writer a `begin immediate` takes ~10 µs.
import { createRequire } from 'node:module';
import { isMainThread } from 'node:worker_threads';
import { writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.BENCH_BUSY_DIR;
if (dir && isMainThread) {
  const require = createRequire(join(process.cwd(), 'package.json'));
  const Database = require('better-sqlite3');
  const sums = {
    begin: { count: 0, totalMs: 0, maxMs: 0, over1Ms: 0, over5Ms: 0, over20Ms: 0, over1MsTotalMs: 0 },
    commit: { count: 0, totalMs: 0, maxMs: 0, over1Ms: 0, over5Ms: 0, over20Ms: 0, over1MsTotalMs: 0 },
    busyErrors: 0,
  };
  const add = (entry, ms) => {
    entry.count++;
    entry.totalMs += ms;
    if (ms > entry.maxMs) entry.maxMs = ms;
    if (ms > 1) { entry.over1Ms++; entry.over1MsTotalMs += ms; }
    if (ms > 5) entry.over5Ms++;
    if (ms > 20) entry.over20Ms++;
  };
  const exec = Database.prototype.exec;
  Database.prototype.exec = function timedExec(source) {
    const entry = source === 'begin immediate' ? sums.begin : source === 'commit' ? sums.commit : undefined;
    if (!entry) return exec.call(this, source);
    const start = performance.now();
    try {
      return exec.call(this, source);
    } catch (error) {
      if (String(error?.code ?? '').startsWith('SQLITE_BUSY')) sums.busyErrors++;
      throw error;
    } finally {
      add(entry, performance.now() - start);
    }
  };
  const file = join(dir, `${process.pid}.json`);
  const write = () => {
    try {
      writeFileSync(`${file}.tmp`, JSON.stringify({ pid: process.pid, at: Date.now(), ...sums }));
      renameSync(`${file}.tmp`, file);
    } catch { /* the directory went away at the end of the run */ }
  };
  setInterval(write, 50).unref();
  process.on('exit', write);
}
