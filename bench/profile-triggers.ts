import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { HERALD_BIN, startHerald } from '../test/helpers/herald-process.js';
import { buildServer } from '../scripts/build-server.mjs';

/**
 * `node --import tsx bench/profile-triggers.ts [seconds] [profileDir]` (issue 24): the trigger phase of bench:http
 * alone, with Herald's process CPU time per accepted trigger (read from /proc, robust to a shared machine) and, when a
 * profile directory is given, a `--cpu-prof` profile of the Herald process written there on its exit.
 */
const here = dirname(fileURLToPath(import.meta.url));
const SECRET = 'sk_bench_http_0123456789abcdef0123456789abcdef';
const run = promisify(execFile);
const seconds = Number(process.argv[2] ?? 5);
const profileDir = process.argv[3];

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
  return response.json() as Promise<any>;
};
const messages = async () => (await call('GET', '/v1/messages?channel=in_app&limit=1')).totalCount as number;
try {
  await call('POST', '/v1/integrations', { providerId: 'novu', channel: 'in_app', active: true });
  await call('POST', '/v2/workflows', { workflowId: 'bench-http', name: 'bench http', steps: [{ name: 'inbox', type: 'in_app', controlValues: { subject: 'Bench {{payload.n}}', body: 'Hello {{subscriber.subscriberId}}: {{payload.text}}' } }] });
  const pid = herald.child.pid!;
  const cpuBefore = cpuMs(pid);
  const started = Date.now();
  const { stdout } = await run(process.execPath, [join(here, 'lib', 'http-load-process.mjs'), JSON.stringify({ kind: 'trigger', url: herald.url, connections: 50, durationSeconds: seconds, headers: { authorization: `ApiKey ${SECRET}` }, workflowId: 'bench-http', subscriberPrefix: `p-${Date.now().toString(36)}` })]);
  const load = JSON.parse(stdout);
  const cpuAfterLoad = cpuMs(pid);
  const accepted = load.statusCounts['201'] ?? 0;
  let count = 0;
  let lastChange = Date.now();
  for (;;) {
    const now = await messages();
    if (now !== count) { count = now; lastChange = Date.now(); }
    if (count >= accepted && Date.now() - lastChange > 500) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const cpuEnd = cpuMs(pid);
  console.log(JSON.stringify({
    accepted, perSecond: Math.round(load.requestsPerSecond), latencyMs: load.latencyMs,
    deliveries: count, deliveriesPerSecond: Math.round((count * 1000) / (lastChange - started)),
    cpuMsPerTriggerWithDelivery: Math.round(((cpuEnd - cpuBefore) / accepted) * 1000) / 1000,
    cpuMsDuringLoadPerTrigger: Math.round(((cpuAfterLoad - cpuBefore) / accepted) * 1000) / 1000,
    cpuShareDuringLoad: Math.round(((cpuAfterLoad - cpuBefore) / load.elapsedMs) * 100) / 100,
  }));
} finally {
  await herald.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
