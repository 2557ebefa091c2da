// Preload for a Herald process (issue 24, session 28): per better-sqlite3 call and `exec`, keyed by its SQL, the calls,
// their wall time and the write system calls they made on the calling thread (/proc/thread-self/io `syscw`: WAL
// frames, sub-journal pages). Snapshots every 500 ms to /tmp/sqlite-write-calls-<pid>-<n>.json ({ at, syscw of the
// process, rows }): diff two of them for a window such as a bench's trigger load. Usage:
// NODE_OPTIONS="--import ./bench/lib/sqlite-write-calls.mjs" npm run bench:http -- --mode embedded --triggers-only
// Linux only; diagnostics, not for production (it wraps prototypes and reads /proc around every call).
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');
const probe = new Database(':memory:');
const Statement = Object.getPrototypeOf(probe.prepare('select 1'));
probe.close();
const syscw = () => Number(/syscw: (\d+)/.exec(readFileSync('/proc/thread-self/io', 'utf8'))[1]);
const sums = new Map();
function add(key, ns, w) {
  let sum = sums.get(key);
  if (!sum) sums.set(key, (sum = { calls: 0, ns: 0, writes: 0 }));
  sum.calls++; sum.ns += ns; sum.writes += w;
}
for (const method of ['run', 'all', 'get']) {
  const original = Statement[method];
  Statement[method] = function timed(...args) {
    const w0 = syscw(); const start = process.hrtime.bigint();
    try { return original.apply(this, args); }
    finally { const ns = Number(process.hrtime.bigint() - start); add(`${method} ${this.source.slice(0, 200)}`, ns, syscw() - w0); }
  };
}
const exec = Database.prototype.exec;
Database.prototype.exec = function timedExec(source) {
  const w0 = syscw(); const start = process.hrtime.bigint();
  try { return exec.call(this, source); }
  finally { const ns = Number(process.hrtime.bigint() - start); add(`exec ${source.slice(0, 60)}`, ns, syscw() - w0); }
};
let n = 0;
setInterval(() => {
  if (sums.size === 0) return;
  const rows = [...sums].map(([statement, sum]) => ({ statement, ...sum }));
  writeFileSync(`/tmp/sqlite-write-calls-${process.pid}-${String(n++).padStart(4, '0')}.json`, JSON.stringify({ at: Date.now(), syscw: Number(/syscw: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))[1]), rows }));
}, 500).unref();
