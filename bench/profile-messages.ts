import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { HERALD_BIN, startHerald } from '../test/helpers/herald-process.js';
import { buildServer } from '../scripts/build-server.mjs';

/**
 * `node --import tsx bench/profile-messages.ts [seconds] [profileDir]` (issue 24): the messages-list phase of
 * bench:http alone (300 subscribers with 12 in-app messages each, `GET /v1/messages?subscriberId=…&limit=10&page=0|1`
 * in turn, 50 connections), with Herald's process CPU time per list request (read from /proc, robust to a shared
 * machine) and, when a profile directory is given, a `--cpu-prof` profile of the Herald process written there on exit.
 */
const here = dirname(fileURLToPath(import.meta.url));
const SECRET = 'sk_bench_http_0123456789abcdef0123456789abcdef';
const run = promisify(execFile);
const seconds = Number(process.argv[2] ?? 5);
const profileDir = process.argv[3];
const SUBSCRIBERS = 300;

function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in clock ticks of 10 ms
}

await buildServer({ ifStale: true, quiet: true });
const dataDir = mkdtempSync(join(tmpdir(), 'herald-profile-'));
// `--cpu-prof` is refused in NODE_OPTIONS: it goes before the script on the command line.
const herald = await startHerald(
  { HERALD_DATA_DIR: dataDir, HERALD_BOOTSTRAP_SECRET_KEY: SECRET, LOG_LEVEL: 'warn' },
  profileDir ? [`--cpu-prof-dir=${profileDir}`, HERALD_BIN, 'start'] : ['start'],
  profileDir ? { bin: '--cpu-prof' } : {},
);
const call = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${herald.url}${path}`, { method, headers: { authorization: `ApiKey ${SECRET}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status >= 400) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.text();
};
const messages = async () => JSON.parse(await call('GET', '/v1/messages?channel=in_app&limit=1')).totalCount as number;
try {
  await call('POST', '/v1/integrations', { providerId: 'novu', channel: 'in_app', active: true });
  await call('POST', '/v2/workflows', { workflowId: 'bench-http', name: 'bench http', steps: [{ name: 'inbox', type: 'in_app', controlValues: { subject: 'Bench {{payload.n}}', body: 'Hello {{subscriber.subscriberId}}: {{payload.text}}' } }] });
  const prefix = `list-${Date.now().toString(36)}`;
  const subscribers = Array.from({ length: SUBSCRIBERS }, (_, i) => `${prefix}-${i}`);
  for (let round = 0; round < 12; round++) {
    for (let i = 0; i < subscribers.length; i += 100) {
      await call('POST', '/v1/events/trigger', { name: 'bench-http', to: subscribers.slice(i, i + 100), payload: { n: round, text: 'x'.repeat(200) } });
    }
  }
  while ((await messages()) < 12 * SUBSCRIBERS) await new Promise((r) => setTimeout(r, 100));
  const paths = subscribers.flatMap((id) => [0, 1].map((page) => `/v1/messages?subscriberId=${id}&limit=10&page=${page}`));
  const bytes = (await call('GET', paths[0]!)).length;
  const options = (duration: number) => JSON.stringify({ kind: 'rotate', url: herald.url, paths, connections: 50, durationSeconds: duration, headers: { authorization: `ApiKey ${SECRET}` } });
  await run(process.execPath, [join(here, 'lib', 'http-load-process.mjs'), options(1)]); // warm-up
  const pid = herald.child.pid!;
  const cpuBefore = cpuMs(pid);
  const { stdout } = await run(process.execPath, [join(here, 'lib', 'http-load-process.mjs'), options(seconds)]);
  const load = JSON.parse(stdout);
  const cpuAfter = cpuMs(pid);
  console.log(JSON.stringify({
    bytes, ok: load.ok, statusCounts: load.statusCounts, perSecond: Math.round(load.requestsPerSecond), latencyMs: load.latencyMs,
    cpuMsPerRequest: Math.round(((cpuAfter - cpuBefore) / load.ok) * 1000) / 1000,
    cpuShareDuringLoad: Math.round(((cpuAfter - cpuBefore) / load.elapsedMs) * 100) / 100,
  }));
} finally {
  await herald.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
