// Preload for a Herald process (issue 24): times every better-sqlite3 statement call and `exec`, keyed by the call and
// the SQL's first 160 characters, and writes the sums to /tmp/sqlite-statement-times-<pid>.json every 2 s.
// Usage: NODE_OPTIONS="--import ./bench/lib/sqlite-statement-times.mjs" node --import tsx bench/profile-drain.ts 8
// (the bench's Herald child inherits NODE_OPTIONS). The times are wall time of synchronous calls on the thread that
// made them: CPU plus the WAL's write syscalls, with no await inside. Not for production: it wraps prototypes.
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');
const probe = new Database(':memory:');
const Statement = Object.getPrototypeOf(probe.prepare('select 1'));
probe.close();

const sums = new Map();
function add(key, ns) {
  let sum = sums.get(key);
  if (!sum) sums.set(key, (sum = { calls: 0, ns: 0 }));
  sum.calls++;
  sum.ns += ns;
}
for (const method of ['run', 'all', 'get', 'iterate']) {
  const original = Statement[method];
  Statement[method] = function timed(...args) {
    const start = process.hrtime.bigint();
    try {
      return original.apply(this, args);
    } finally {
      add(`${method} ${this.source.slice(0, 160)}`, Number(process.hrtime.bigint() - start));
    }
  };
}
const exec = Database.prototype.exec;
Database.prototype.exec = function timedExec(source) {
  const start = process.hrtime.bigint();
  try {
    return exec.call(this, source);
  } finally {
    add(`exec ${source.slice(0, 60)}`, Number(process.hrtime.bigint() - start));
  }
};
setInterval(() => {
  if (sums.size === 0) return;
  const rows = [...sums].map(([statement, sum]) => ({ statement, ...sum }));
  writeFileSync(`/tmp/sqlite-statement-times-${process.pid}.json`, JSON.stringify(rows));
}, 2000).unref();
