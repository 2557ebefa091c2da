import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/http/app.js';
import { Lifecycle } from '../../src/http/lifecycle.js';
import { scaleoutModeRequested } from '../helpers/databases.js';
import { startHerald, type HeraldProcess } from '../helpers/herald-process.js';
import { SCALEOUT_SECRET, startScaleoutProcesses, startWorker, type HeraldWorkerProcess, type ScaleoutProcesses } from '../helpers/scaleout-processes.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { expectErrorBody } from '../helpers/shape.js';

/**
 * Issue #20, point 5: `/health/live` and `/health/ready` (not ready while starting or draining), and SIGTERM under
 * load: the process stops accepting, finishes what it accepted, exits 0, and after a restart every trigger that was
 * answered 2xx has its message (embedded: `herald start`; scale-out: `herald api` and `herald worker`).
 */
const scaleout = scaleoutModeRequested();
const EMBEDDED_SECRET = 'sk_shutdown_test_0123456789abcdef0123456789abcd';
const SECRET = scaleout ? SCALEOUT_SECRET : EMBEDDED_SECRET;

describe('health routes', () => {
  let server: TestServer;
  afterAll(async () => server?.close());

  it('live is always 200; ready follows the lifecycle: 503 starting, 200 ready, 503 draining; /health is unchanged', async () => {
    server = await startTestServer();
    const lifecycle = new Lifecycle();
    const app = await buildApp(server.deps, { lifecycle });
    try {
      const get = async (url: string) => {
        const response = await app.inject({ method: 'GET', url });
        return { status: response.statusCode, body: response.json(), headers: response.headers };
      };
      expect(await get('/health/live')).toMatchObject({ status: 200, body: { status: 'ok' } });
      expect(await get('/health/ready')).toMatchObject({ status: 503, body: { status: 'starting' }, headers: { 'retry-after': '1' } });
      lifecycle.ready();
      expect(await get('/health/ready')).toMatchObject({ status: 200, body: { status: 'ready', checks: { storage: { status: 'up' }, queue: { status: 'up' } } } });
      lifecycle.drain();
      expect(await get('/health/ready')).toMatchObject({ status: 503, body: { status: 'draining' } });
      expect(await get('/health/live')).toMatchObject({ status: 200 });
      expect(await get('/health')).toMatchObject({ status: 200, body: { status: 'ok' } });
      // A request arriving while draining: the API's 503, Retry-After, and the connection closed.
      const refused = await app.inject({ method: 'GET', url: '/v1/subscribers', headers: { authorization: `ApiKey ${server.devKey}` } });
      expect(refused.statusCode).toBe(503);
      expect(refused.headers).toMatchObject({ 'retry-after': '1', connection: 'close' });
      expectErrorBody(refused.json(), 503, '/v1/subscribers');
    } finally {
      await app.close();
    }
  });
});

const dataDir = mkdtempSync(join(tmpdir(), 'herald-shutdown-'));
let cluster: ScaleoutProcesses | undefined;
const spawned: Array<{ child: HeraldProcess['child'] }> = [];
afterAll(async () => {
  for (const process of spawned) if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill('SIGKILL');
  await cluster?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function startServerProcess(): Promise<HeraldProcess> {
  const herald = cluster
    ? await startHerald(cluster.env, ['api'])
    : await startHerald({ HERALD_DATA_DIR: dataDir, HERALD_BOOTSTRAP_SECRET_KEY: SECRET, LOG_LEVEL: 'warn', HERALD_QUEUE_POLL_MS: '20' });
  spawned.push(herald);
  return herald;
}

function exitOf(child: HeraldProcess['child']): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

const api = (url: string, method: string, path: string, body?: unknown) =>
  fetch(`${url}${path}`, {
    method,
    headers: { authorization: `ApiKey ${SECRET}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe(`SIGTERM under load (${scaleout ? 'herald api + herald worker' : 'herald start'})`, () => {
  it('exits 0 after finishing what it accepted; every 2xx trigger has its message after a restart', { timeout: 240_000 }, async () => {
    let worker: HeraldWorkerProcess | undefined;
    if (scaleout) {
      cluster = await startScaleoutProcesses({ apis: 1, workers: 1 });
      spawned.push(...cluster.apis, ...cluster.workers);
      worker = cluster.workers[0];
    }
    let server = scaleout ? cluster!.apis[0]! : await startServerProcess();
    const live = await fetch(`${server.url}/health/live`);
    expect(live.status).toBe(200);
    const ready = await fetch(`${server.url}/health/ready`);
    expect(ready.status, await ready.text()).toBe(200);
    const workflow = await api(server.url, 'POST', '/v2/workflows', {
      workflowId: 'drain',
      name: 'Drain',
      steps: [{ name: 'note', type: 'in_app', controlValues: { body: 'n={{ payload.n }}' } }],
    });
    expect(workflow.status, await workflow.text()).toBe(201);

    // A steady stream of triggers from 16 clients; SIGTERM lands in the middle of it and the stream goes on.
    const accepted: string[] = [];
    const refusedStatuses = new Map<number, number>();
    let connectionErrors = 0;
    let sent = 0;
    let stopStream = false;
    const url = server.url;
    const client = async () => {
      while (!stopStream) {
        const n = sent++;
        try {
          const response = await api(url, 'POST', '/v1/events/trigger', { name: 'drain', to: `drain-sub-${n % 10}`, payload: { n } });
          const text = await response.text();
          if (response.status === 201) accepted.push(JSON.parse(text).data.transactionId);
          else refusedStatuses.set(response.status, (refusedStatuses.get(response.status) ?? 0) + 1);
        } catch {
          connectionErrors++;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    };
    const clients = Array.from({ length: 16 }, client);
    while (accepted.length < 300) await new Promise((resolve) => setTimeout(resolve, 20));
    const beforeSignal = accepted.length;
    const exited = exitOf(server.child);
    server.child.kill('SIGTERM');
    const workerExited = worker ? exitOf(worker.child) : undefined;
    // The worker is stopped while it still has jobs of the stream to run.
    if (worker) setTimeout(() => worker.child.kill('SIGTERM'), 100);
    const exit = await exited;
    stopStream = true;
    await Promise.all(clients);
    expect(exit, server.output()).toEqual({ code: 0, signal: null });
    if (workerExited) expect(await workerExited, worker!.output()).toEqual({ code: 0, signal: null });
    // Nothing is answered with a 5xx while draining: a request is either served, refused at the door, or never reached.
    expect([...refusedStatuses.keys()].filter((status) => status >= 500 && status !== 503)).toEqual([]);
    console.info(
      `SIGTERM under load: ${accepted.length} accepted (${accepted.length - beforeSignal} after the signal was sent), refused ${JSON.stringify([...refusedStatuses])}, ${connectionErrors} connection errors`,
    );

    server = await startServerProcess();
    if (scaleout) spawned.push(await startWorker(cluster!.env));
    const wanted = new Set(accepted);
    const deadline = Date.now() + 120_000;
    let missing: string[] = [...wanted];
    for (;;) {
      const seen = new Map<string, number>();
      let refused: string | undefined;
      for (let page = 0; ; page++) {
        const response = await api(server.url, 'GET', `/v1/messages?channel=in_app&limit=1000&page=${page}`);
        // A read refused while the restarted server drains (seen once under CI's parallel files, status unknown) is
        // asked again on the next round; its status and body fail the test if it is still refused at the deadline.
        if (!response.ok) {
          refused = `${response.status} ${await response.text()}`;
          break;
        }
        const body = (await response.json()) as { data: Array<{ transactionId: string }>; hasMore: boolean };
        for (const message of body.data) seen.set(message.transactionId, (seen.get(message.transactionId) ?? 0) + 1);
        if (!body.hasMore) break;
      }
      if (refused !== undefined) {
        expect(Date.now() <= deadline, `GET /v1/messages still refused at the deadline: ${refused}`).toBe(true);
        await new Promise((resolve) => setTimeout(resolve, 500));
        continue;
      }
      missing = [...wanted].filter((transactionId) => !seen.has(transactionId));
      const duplicated = [...seen].filter(([, count]) => count > 1);
      expect(duplicated).toEqual([]);
      if (missing.length === 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(missing.slice(0, 5), `${missing.length} accepted triggers without a message`).toEqual([]);
  });
});
