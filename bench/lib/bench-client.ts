import { execFile, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * The pieces `npm run bench:scaling` and `npm run bench:data-size` share with bench/http.ts's set-up: autocannon in a
 * process of its own (bench/lib/http-load-process.mjs), API calls, and waiting for deliveries by counting messages.
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

export async function api(url: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `ApiKey ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 400) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  return { status: response.status, json: text ? JSON.parse(text) : undefined };
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

/** The one-step in-app workflow every Herald bench triggers. */
export async function createInAppWorkflow(url: string, key: string, workflowId: string): Promise<void> {
  await api(url, key, 'POST', '/v1/integrations', { providerId: 'novu', channel: 'in_app', active: true });
  await api(url, key, 'POST', '/v2/workflows', {
    workflowId, name: workflowId,
    steps: [{ name: 'inbox', type: 'in_app', controlValues: { subject: 'Bench {{payload.n}}', body: 'Hello {{subscriber.subscriberId}}: {{payload.text}}' } }],
  });
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
