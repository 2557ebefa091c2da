#!/usr/bin/env node
// The whole test suite: typecheck; every test in embedded mode (SQLite + in-process queue; the store,
// queue and idempotency contract suites in it also run against PostgreSQL and Redis); then the tests
// whose behaviour depends on the mode (HTTP, SDK, worker, scale-out processes and fault tests) again in
// scale-out mode. Scale-out needs PostgreSQL and Redis: without them it is skipped with the reason
// printed, except under CI=true, where it must run.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import net from 'node:net';

const args = process.argv.slice(2);
const onlyMode = process.env.HERALD_TEST_ONLY_MODE; // 'embedded' | 'scaleout' for a quicker local run
const isCi = process.env.CI === 'true';

function run(command, commandArgs, env = {}) {
  const result = spawnSync(command, commandArgs, { stdio: 'inherit', env: { ...process.env, ...env } });
  return result.status ?? 1;
}

function reachable(host, port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 2000 });
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => { socket.destroy(); resolve(false); });
  });
}

function summary(file) {
  try {
    const report = JSON.parse(readFileSync(file, 'utf8'));
    rmSync(file, { force: true });
    return { passed: report.numPassedTests, failed: report.numFailedTests, skipped: report.numPendingTests + (report.numTodoTests ?? 0) };
  } catch {
    return undefined;
  }
}

const totals = { passed: 0, failed: 0, skipped: 0 };
let exitCode = run('npx', ['tsc', '--noEmit']) || run('npx', ['tsc', '--noEmit', '-p', 'web']);
if (exitCode !== 0) console.error('typecheck failed');

/** Mode-dependent test folders, run a second time in scale-out mode. */
const SCALEOUT_PATHS = [
  'test/http', 'test/sdk', 'test/worker', 'test/bench', 'test/scaleout', 'test/faults', 'test/realtime', 'test/dashboard',
  'test/crash', 'test/webhooks', 'test/observability', 'test/bridge', 'test/deploy', 'test/cli/shutdown.test.ts', 'test/cli/doctor.test.ts',
];
/** Scale-out-only tests, left out of the embedded phase. */
const SCALEOUT_ONLY = ['test/faults/**', 'test/scaleout/**'];

async function suite(mode, env, vitestArgs) {
  const report = `.vitest-${mode}.json`;
  const code = run('npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...vitestArgs, ...args], env);
  const counts = summary(report);
  if (counts) {
    totals.passed += counts.passed; totals.failed += counts.failed; totals.skipped += counts.skipped;
    console.log(`${mode}: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  }
  if (code !== 0) exitCode = code;
}

if (onlyMode !== 'scaleout') {
  await suite('embedded', { HERALD_TEST_MODE: 'embedded' }, SCALEOUT_ONLY.flatMap((glob) => ['--exclude', glob]));
}
if (onlyMode !== 'embedded') {
  const pg = await reachable('127.0.0.1', 5432);
  const redis = await reachable('127.0.0.1', 6379);
  if (pg && redis) {
    await suite('scaleout', { HERALD_TEST_MODE: 'scaleout' }, args.length ? [] : SCALEOUT_PATHS);
  } else {
    const reason = `scale-out suite not run: ${!pg ? 'PostgreSQL at 127.0.0.1:5432' : ''}${!pg && !redis ? ' and ' : ''}${!redis ? 'Redis at 127.0.0.1:6379' : ''} unreachable`;
    if (isCi) { console.error(`${reason} (CI=true: this is a failure)`); exitCode = 1; totals.failed += 1; }
    else console.log(`SKIPPED ${reason}`);
  }
}

console.log(`${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
process.exit(exitCode);
