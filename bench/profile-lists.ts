import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { HERALD_BIN, startHerald } from '../test/helpers/herald-process.js';
import { buildServer } from '../scripts/build-server.mjs';

/**
 * `node --import tsx bench/profile-lists.ts [seconds] [profileDir] [--notifications]` (issue 24): the messages-list
 * phase of bench:http alone (300 subscribers with 12 in-app messages each, pages 0 and 1 in turn, 50 connections), with
 * Herald's process CPU time per request and, when a profile directory is given, a `--cpu-prof` profile of the Herald
 * process (written on exit; it covers the seeding too, so compare its list functions, not its totals).
 * `--notifications`: the events-list phase instead: 20,000 events (200 triggers to 100 subscribers each, written as
 * fast as the worker fans them out, like bench:http's trigger phase), `GET /v1/notifications?limit=10&page=…` over
 * pages 0-1,999 in turn.
 */
const here = dirname(fileURLToPath(import.meta.url));
const SECRET = 'sk_bench_http_0123456789abcdef0123456789abcdef';
const run = promisify(execFile);
const positional = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const seconds = Number(positional[0] ?? 5);
const profileDir = positional[1];
const eventList = process.argv.includes('--notifications');

function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

await buildServer({ ifStale: true, quiet: true });
const dataDir = mkdtempSync(join(tmpdir(), 'herald-profile-'));
const herald = await startHerald(
  { HERALD_DATA_DIR: dataDir, HERALD_BOOTSTRAP_SECRET_KEY: SECRET, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
  profileDir ? [`--cpu-prof-dir=${profileDir}`, HERALD_BIN, 'start'] : ['start'],
  profileDir ? { bin: '--cpu-prof' } : {},
);
const call = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${herald.url}${path}`, { method, headers: { authorization: `ApiKey ${SECRET}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status >= 400) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json() as Promise<any>;
};
const messages = async () => (await call('GET', '/v1/messages?channel=in_app&limit=1')).totalCount as number;
const EVENT_ROUNDS = 200;
try {
  await call('POST', '/v1/integrations', { providerId: 'novu', channel: 'in_app', active: true });
  await call('POST', '/v2/workflows', { workflowId: 'bench-http', name: 'bench http', steps: [{ name: 'inbox', type: 'in_app', controlValues: { subject: 'Bench {{payload.n}}', body: 'Hello {{subscriber.subscriberId}}: {{payload.text}}' } }] });
  const subscribers = Array.from({ length: eventList ? 100 : 300 }, (_, i) => `list-${i}`);
  const rounds = eventList ? EVENT_ROUNDS : 12;
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < subscribers.length; i += 100) {
      await call('POST', '/v1/events/trigger', { name: 'bench-http', to: subscribers.slice(i, i + 100), payload: { n: round, text: 'x'.repeat(200) } });
    }
  }
  while ((await messages()) < rounds * subscribers.length) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 500));
  const paths = eventList
    ? Array.from({ length: (rounds * subscribers.length) / 10 }, (_, page) => `/v1/notifications?limit=10&page=${page}`)
    : subscribers.flatMap((id) => [0, 1].map((page) => `/v1/messages?subscriberId=${id}&limit=10&page=${page}`));
  const pid = herald.child.pid!;
  const cpuBefore = cpuMs(pid);
  const statBefore = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const statusBefore = readFileSync(`/proc/${pid}/status`, 'utf8');
  const ctxBefore = { v: Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(statusBefore)![1]), n: Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(statusBefore)![1]) };
  const { stdout } = await run(process.execPath, [join(here, 'lib', 'http-load-process.mjs'), JSON.stringify({ kind: 'rotate', url: herald.url, paths, connections: 50, durationSeconds: seconds, headers: { authorization: `ApiKey ${SECRET}` } })]);
  const load = JSON.parse(stdout);
  const cpuAfter = cpuMs(pid);
  const statAfter = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const ctx = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)![1]);
  const extra = { utimeMs: (Number(statAfter[11]) - Number(statBefore[11])) * 10, stimeMs: (Number(statAfter[12]) - Number(statBefore[12])) * 10, voluntary: ctx('voluntary_ctxt_switches') - ctxBefore.v, involuntary: ctx('nonvoluntary_ctxt_switches') - ctxBefore.n };
  console.log(JSON.stringify({
    ok: load.ok, perSecond: Math.round(load.requestsPerSecond), latencyMs: load.latencyMs,
    cpuUsPerRequest: Math.round(((cpuAfter - cpuBefore) / load.ok) * 1000),
    cpuShare: Math.round(((cpuAfter - cpuBefore) / load.elapsedMs) * 100) / 100, ...extra,
  }));
} finally {
  await herald.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
