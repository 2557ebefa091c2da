import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from '../../src/config.js';
import { createContainer, type Container } from '../../src/container.js';
import type { Clock } from '../../src/domain/clock.js';
import { buildApp, type BuildAppOptions } from '../../src/http/app.js';
import { createApiKey } from '../../src/usecases/auth/api-keys.js';
import { createSessionToken } from '../../src/usecases/auth/session-tokens.js';
import { bootstrapTenancy } from '../../src/usecases/tenancy/bootstrap-tenancy.js';
import type { Deps } from '../../src/usecases/deps.js';
import { createWorker, type Worker, type WorkerOptions } from '../../src/worker/worker.js';
import { SqlQueue } from '../../src/queue/sql-queue.js';
import { scaleoutResourcesFor, releaseScaleoutResources } from './databases.js';
import { BullMqQueue } from '../../src/queue/bullmq-queue.js';

/**
 * A real Herald on 127.0.0.1 with a fresh data directory: tests talk to it over real HTTP.
 * `devKey`/`prodKey` are ApiKey secrets of the two environments; `devSession` a Bearer token.
 */
export interface TestServer {
  url: string;
  app: FastifyInstance;
  deps: Deps;
  container: Container;
  config: Config;
  dataDir: string;
  devKey: string;
  prodKey: string;
  devSession: string;
  prodSession: string;
  devEnvironmentId: string;
  prodEnvironmentId: string;
  /** fetch against the server; `key` defaults to devKey (pass null to send no Authorization). */
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  close(options?: { keepData?: boolean }): Promise<void>;
  /** The embedded worker, when started with `worker`. */
  worker?: Worker;
  /** Makes the queue look for due jobs now (after moving a manual clock). */
  wake(): void;
  /** Resolves once no queue job is waiting or running (jobs due later count as waiting). */
  waitForIdle(options?: { timeoutMs?: number; ignoreDelayed?: boolean }): Promise<void>;
}

/** A clock tests move by hand: the worker and queue read time only through `deps.clock`. */
export class ManualClock implements Clock {
  constructor(private current = Date.parse('2026-01-05T10:00:00.000Z')) {}
  now(): number {
    return this.current;
  }
  set(ms: number | string): void {
    this.current = typeof ms === 'string' ? Date.parse(ms) : ms;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

export interface RequestOptions {
  body?: unknown;
  /** An ApiKey secret; null sends no Authorization header. */
  key?: string | null;
  /** A Bearer token instead of an API key. */
  bearer?: string;
  headers?: Record<string, string>;
  /** Send this raw string as the body instead of JSON-encoding `body`. */
  rawBody?: string;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface TestServerOptions {
  env?: Record<string, string>;
  config?: Partial<Config>;
  clock?: Clock;
  /** Reuse a data directory (restart tests). */
  dataDir?: string;
  appOptions?: BuildAppOptions;
  /** Start the embedded worker (true, or its options: custom steps, concurrency). */
  worker?: boolean | WorkerOptions;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'herald-test-'));
  // HERALD_TEST_MODE=scaleout: the same server over a fresh PostgreSQL schema and Redis prefix (see databases.ts).
  const scaleout = await scaleoutResourcesFor(dataDir, options.env ?? {});
  const config = loadConfig(
    { HERALD_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent', ...(scaleout?.env ?? {}), ...(options.env ?? {}) },
    options.config,
  );
  const container = await createContainer(config, { clock: options.clock, redisPrefix: scaleout?.redisPrefix });
  const { deps } = container;
  await bootstrapTenancy(deps);
  const devKey = (await createApiKey(deps, { environmentName: 'development' })).secretKey;
  const prodKey = (await createApiKey(deps, { environmentName: 'production' })).secretKey;
  const devSession = (await createSessionToken(deps, { environmentName: 'development', ttlSeconds: 3600 })).token;
  const prodSession = (await createSessionToken(deps, { environmentName: 'production', ttlSeconds: 3600 })).token;
  const devEnvironmentId = (await deps.store.tenancy.findEnvironmentByName('development'))!._id;
  const prodEnvironmentId = (await deps.store.tenancy.findEnvironmentByName('production'))!._id;

  const app = await buildApp(deps, { realtime: container.realtime, readers: container.readers, ...options.appOptions });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const worker = options.worker ? createWorker(deps, options.worker === true ? {} : options.worker) : undefined;
  await worker?.start();
  const wake = () => {
    if (deps.queue instanceof SqlQueue) deps.queue.wake();
  };
  async function waitForIdle(waitOptions: { timeoutMs?: number; ignoreDelayed?: boolean } = {}): Promise<void> {
    const deadline = Date.now() + (waitOptions.timeoutMs ?? 10_000);
    for (;;) {
      if (deps.queue instanceof BullMqQueue) {
        // Scale-out mode: BullMQ runs delays on Redis time, so `ignoreDelayed` means "not yet due" there.
        const pending = await deps.queue.pendingCount({ ignoreDelayed: waitOptions.ignoreDelayed });
        if (pending === 0) return;
        if (Date.now() > deadline) throw new Error(`queue still has ${pending} job(s) after ${waitOptions.timeoutMs ?? 10_000} ms`);
        await new Promise((resolve) => setTimeout(resolve, 10));
        continue;
      }
      const nowIso = new Date(deps.clock.now()).toISOString();
      let query = container.db.selectFrom('queue_jobs').select((eb) => eb.fn.countAll<number>().as('count')).where('state', 'in', ['waiting', 'active']);
      if (waitOptions.ignoreDelayed) query = query.where((eb) => eb.or([eb('state', '=', 'active'), eb('run_at', '<=', nowIso)]));
      const { count } = await query.executeTakeFirstOrThrow();
      if (Number(count) === 0) return;
      if (Date.now() > deadline) throw new Error(`queue still has ${count} job(s) after ${waitOptions.timeoutMs ?? 10_000} ms`);
      wake();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async function request(method: string, path: string, req: RequestOptions = {}): Promise<TestResponse> {
    const headers: Record<string, string> = { ...(req.headers ?? {}) };
    if (req.bearer) headers.authorization = `Bearer ${req.bearer}`;
    else if (req.key !== null) headers.authorization ??= `ApiKey ${req.key ?? devKey}`;
    let body: string | undefined;
    if (req.rawBody !== undefined) body = req.rawBody;
    else if (req.body !== undefined) {
      body = JSON.stringify(req.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(url + path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  }

  return {
    url, app, deps, container, config, dataDir, devKey, prodKey, devSession, prodSession, devEnvironmentId, prodEnvironmentId,
    request,
    worker,
    wake,
    waitForIdle,
    async close(closeOptions = {}) {
      await app.close();
      await worker?.stop();
      await container.close();
      if (!closeOptions.keepData && !options.dataDir) rmSync(dataDir, { recursive: true, force: true });
      if (!closeOptions.keepData) await releaseScaleoutResources(dataDir);
    },
  };
}
