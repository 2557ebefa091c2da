import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { HERALD_BIN, startHerald } from '../../test/helpers/herald-process.js';
import { buildServer } from '../../scripts/build-server.mjs';

/**
 * The set-up the Herald benches share (bench:http, bench:scaling, bench:data-size, bench:drain, the profile-* scripts):
 * an embedded Herald of their own, autocannon in a process of its own (bench/lib/http-load-process.mjs), API calls,
 * the one-step in-app workflow, the lists' seed, and waiting for deliveries by counting messages.
 */
const LOAD = join(dirname(fileURLToPath(import.meta.url)), 'http-load-process.mjs');
const run = promisify(execFile);

export interface LoadResult {
  ok: number;
  notOk: number;
  errors: number;
  statusCounts: Record<string, number>;
  elapsedMs: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p99: number; max: number };
}

/** One autocannon run (options as http-load-process.mjs reads them). */
export async function load(options: Record<string, unknown>): Promise<LoadResult> {
  const { stdout } = await run(process.execPath, [LOAD, JSON.stringify(options)], { maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout) as LoadResult;
}

/** How many times api() waits out a 429 before it gives up on the call. */
const RATE_LIMITED_RETRIES = 5;

/**
 * One API call; `raw` is the body as answered (bench:http serves the same bytes from its bare server). A 429 is waited
 * out as a well-behaved client does (its Retry-After, in seconds): a bench's own calls right after a timed load at
 * Herald's default limits (HERALD_RATE_LIMIT_GLOBAL, per environment and second) can find that second's budget spent.
 */
export async function api(url: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any; raw: Buffer }> {
  let response: Response;
  for (let attempt = 0; ; attempt++) {
    response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `ApiKey ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (response.status !== 429 || attempt === RATE_LIMITED_RETRIES) break;
    await response.arrayBuffer();
    const seconds = Number(response.headers.get('retry-after'));
    await new Promise((resolve) => setTimeout(resolve, Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 10) * 1000 : 1000));
  }
  const raw = Buffer.from(await response.arrayBuffer());
  const text = raw.toString('utf8');
  if (response.status >= 400) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  let json: unknown;
  try { json = text ? JSON.parse(text) : undefined; } catch { json = undefined; }
  return { status: response.status, json, raw };
}

export async function inAppMessageCount(url: string, key: string): Promise<number> {
  return (await api(url, key, 'GET', '/v1/messages?channel=in_app&limit=1')).json.totalCount as number;
}

/**
 * Waits until at least `expected` in-app messages exist and the count has not moved for 500 ms; `at` is the time of
 * the last change (requests in flight when a load stops were accepted but not counted by the load generator).
 */
export async function waitForMessages(url: string, key: string, expected: number, timeoutMs: number): Promise<{ count: number; at: number }> {
  const deadline = Date.now() + timeoutMs;
  let count = 0;
  let lastChange = Date.now();
  while (Date.now() < deadline) {
    const now = await inAppMessageCount(url, key);
    if (now !== count) { count = now; lastChange = Date.now(); }
    if (count >= expected && Date.now() - lastChange >= 500) return { count, at: lastChange };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { count, at: lastChange };
}

/** The in-app integration and the one-step in-app workflow every Herald bench triggers (`controlValues`: its step's). */
export async function createInAppWorkflow(
  url: string,
  key: string,
  workflowId: string,
  options: { name?: string; controlValues?: Record<string, unknown> } = {},
): Promise<void> {
  await api(url, key, 'POST', '/v1/integrations', { providerId: 'novu', channel: 'in_app', active: true });
  await api(url, key, 'POST', '/v2/workflows', {
    workflowId, name: options.name ?? workflowId,
    steps: [{ name: 'inbox', type: 'in_app', controlValues: options.controlValues ?? { subject: 'Bench {{payload.n}}', body: 'Hello {{subscriber.subscriberId}}: {{payload.text}}' } }],
  });
}

/** Messages per subscriber in the lists' seed: pages 0 and 1 of 10. */
export const LIST_MESSAGES_PER_SUBSCRIBER = 12;

/**
 * The lists' data of bench:http: LIST_MESSAGES_PER_SUBSCRIBER in-app messages for each of `subscribers`, by triggers
 * of `workflowId` to 100 of them at a time; waits until every message exists and returns how many were added.
 */
export async function seedListMessages(url: string, key: string, workflowId: string, subscribers: string[]): Promise<number> {
  const start = await inAppMessageCount(url, key);
  for (let round = 0; round < LIST_MESSAGES_PER_SUBSCRIBER; round++) {
    for (let i = 0; i < subscribers.length; i += 100) {
      await api(url, key, 'POST', '/v1/events/trigger', { name: workflowId, to: subscribers.slice(i, i + 100), payload: { n: round, text: 'x'.repeat(200) } });
    }
  }
  return (await waitForMessages(url, key, start + LIST_MESSAGES_PER_SUBSCRIBER * subscribers.length, 300_000)).count - start;
}

/** The secret key an embedded bench Herald is started with (HERALD_BOOTSTRAP_SECRET_KEY). */
export const BENCH_SECRET = 'sk_bench_http_0123456789abcdef0123456789abcdef';

export interface BenchHerald {
  url: string;
  child: ChildProcess;
  /** Stops Herald (a profile is written then) and removes its data dir. */
  stop(): Promise<void>;
}

/**
 * An embedded Herald of the compiled build (built first when stale) on a fresh data dir, keyed BENCH_SECRET; with
 * `profileDir`, a `--cpu-prof` profile of it is written there when it stops (it covers its whole life).
 */
export async function startBenchHerald(options: { profileDir?: string; env?: Record<string, string> } = {}): Promise<BenchHerald> {
  await buildServer({ ifStale: true, quiet: true });
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-profile-'));
  const { profileDir } = options;
  // `--cpu-prof` is refused in NODE_OPTIONS: it goes before the script on the command line.
  const herald = await startHerald(
    { HERALD_DATA_DIR: dataDir, HERALD_BOOTSTRAP_SECRET_KEY: BENCH_SECRET, LOG_LEVEL: 'warn', ...options.env },
    profileDir ? [`--cpu-prof-dir=${profileDir}`, HERALD_BIN, 'start'] : ['start'],
    profileDir ? { bin: '--cpu-prof' } : {},
  );
  return {
    url: herald.url,
    child: herald.child,
    async stop() {
      await herald.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Holds `file` with flock(1) until the returned release is called: a long bench takes the machine's shared bench lock
 * (/tmp/herald-bench.lock) only while it measures, not while it seeds. Do not combine with an outer
 * `flock <file> npm run …` on the same file (the inner lock would wait for the outer one forever).
 */
export async function acquireLock(file: string): Promise<() => void> {
  const child = spawn('flock', [file, '-c', 'echo locked; exec cat'], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => { if (chunk.toString().includes('locked')) resolve(); });
    child.once('exit', (code) => reject(new Error(`flock ${file} exited with ${code}`)));
  });
  return () => { child.stdin!.end(); };
}

export const round1 = (value: number) => Math.round(value * 10) / 10;
