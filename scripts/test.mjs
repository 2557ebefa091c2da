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
    // A file whose set-up failed counts its tests as skipped: its failure shows in failedFiles.
    return { passed: report.numPassedTests, failed: report.numFailedTests, skipped: report.numPendingTests + (report.numTodoTests ?? 0), failedFiles: report.testResults.filter((file) => file.status === 'failed').length };
  } catch {
    return undefined;
  }
}

const totals = { passed: 0, failed: 0, skipped: 0, failedFiles: 0 };
let exitCode = run('npx', ['tsc', '--noEmit']) || run('npx', ['tsc', '--noEmit', '-p', 'web']);
if (exitCode !== 0) console.error('typecheck failed');

/** Mode-dependent test folders, run a second time in scale-out mode. */
const SCALEOUT_PATHS = [
  'test/http', 'test/sdk', 'test/worker', 'test/bench', 'test/scaleout', 'test/faults', 'test/realtime', 'test/dashboard',
  'test/crash', 'test/webhooks', 'test/observability', 'test/bridge', 'test/deploy', 'test/cli/shutdown.test.ts', 'test/cli/doctor.test.ts',
];
/** Scale-out-only tests, left out of the embedded phase. */
const SCALEOUT_ONLY = ['test/faults/**', 'test/scaleout/**'];

/**
 * Files that run alone, after the others (which run several at a time, see vitest.config.ts): they load both cores
 * on purpose and assert what must happen within a time under that load, which other files beside them would eat into.
 * scaleout-faults: 2 APIs, 2 workers, a private PostgreSQL and Redis and 2,000 triggers per test, where every trigger
 * must be answered within its retry budget across the outage. idempotency-crash: every key must resolve within the
 * idempotency lease (10 s) plus 10 s after each kill.
 */
const ALONE = ['test/faults/scaleout-faults.test.ts', 'test/crash/idempotency-crash.test.ts'];

async function vitest(label, env, vitestArgs) {
  const report = `.vitest-${label}.json`;
  const code = run('npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...vitestArgs], env);
  const counts = summary(report);
  if (counts) {
    totals.passed += counts.passed; totals.failed += counts.failed; totals.skipped += counts.skipped; totals.failedFiles += counts.failedFiles;
    console.log(`${label}: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped, ${counts.failedFiles} files failed`);
  }
  if (code !== 0) exitCode = code;
}

/** `paths` limits the mode's files (undefined: all); files named on the command line run as one vitest run. */
async function suite(mode, env, paths, excluded) {
  const excludeArgs = excluded.flatMap((glob) => ['--exclude', glob]);
  if (args.length) return vitest(mode, env, [...excludeArgs, ...args]);
  const under = (file, path) => file === path || file.startsWith(`${path.replace(/\/\*\*$/, '')}/`);
  const alone = ALONE.filter((file) => (!paths || paths.some((path) => under(file, path))) && !excluded.some((glob) => under(file, glob)));
  await vitest(mode, env, [...excludeArgs, ...alone.flatMap((file) => ['--exclude', file]), ...(paths ?? [])]);
  if (alone.length) await vitest(`${mode}-alone`, env, ['--maxWorkers=1', '--minWorkers=1', ...excludeArgs, ...alone]);
}

if (onlyMode !== 'scaleout') {
  await suite('embedded', { HERALD_TEST_MODE: 'embedded' }, undefined, SCALEOUT_ONLY);
}
if (onlyMode !== 'embedded') {
  const pg = await reachable('127.0.0.1', 5432);
  const redis = await reachable('127.0.0.1', 6379);
  if (pg && redis) {
    await suite('scaleout', { HERALD_TEST_MODE: 'scaleout' }, SCALEOUT_PATHS, []);
  } else {
    const reason = `scale-out suite not run: ${!pg ? 'PostgreSQL at 127.0.0.1:5432' : ''}${!pg && !redis ? ' and ' : ''}${!redis ? 'Redis at 127.0.0.1:6379' : ''} unreachable`;
    if (isCi) { console.error(`${reason} (CI=true: this is a failure)`); exitCode = 1; totals.failed += 1; }
    else console.log(`SKIPPED ${reason}`);
  }
}

console.log(`${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped, ${totals.failedFiles} files failed`);
process.exit(exitCode);
