import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestSchema } from './databases.js';
import { HERALD_BIN, runHeraldCommand, startHerald, type HeraldProcess } from './herald-process.js';
import { startPrivateRedis } from './private-services.js';

/**
 * Herald scaled out as a user runs it: real `herald api` and `herald worker` child processes over a fresh schema of
 * the shared PostgreSQL and a private Redis (the processes use the default Redis prefix, which a shared Redis would
 * mix up between test files). For tests where the API process holding a socket and the worker making the event must
 * differ.
 */
export const SCALEOUT_SECRET = 'sk_scaleout_test_0123456789abcdef0123456789ab';

export interface HeraldWorkerProcess {
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

export interface ScaleoutProcesses {
  apis: HeraldProcess[];
  workers: HeraldWorkerProcess[];
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startScaleoutProcesses(options: { apis: number; workers: number; env?: Record<string, string> }): Promise<ScaleoutProcesses> {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-scaleout-'));
  const [schema, redis] = await Promise.all([createTestSchema(), startPrivateRedis()]);
  const env: Record<string, string> = {
    DATABASE_URL: schema.url,
    REDIS_URL: redis.url,
    HERALD_DATA_DIR: dataDir,
    // Every process must share one master key (credentials, session and subscriber tokens).
    HERALD_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    HERALD_BOOTSTRAP_SECRET_KEY: SCALEOUT_SECRET,
    HERALD_QUEUE_POLL_MS: '20',
    LOG_LEVEL: 'warn',
    // Tests share the machine with the test runner's other processes: a worker at a lower priority (the default,
    // HERALD_WORKER_NICE) would only be slower to deliver. bench:http sets the default back.
    HERALD_WORKER_NICE: '0',
    ...(options.env ?? {}),
  };
  const apis: HeraldProcess[] = [];
  const workers: HeraldWorkerProcess[] = [];
  const processes: ScaleoutProcesses = {
    apis,
    workers,
    env,
    async close() {
      await Promise.all([...apis.map((api) => api.stop()), ...workers.map((worker) => worker.stop())]);
      await Promise.allSettled([redis.close(), schema.drop()]);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  try {
    const migrated = await runHeraldCommand(['migrate'], env);
    if (migrated.status !== 0) throw new Error(`herald migrate failed: ${migrated.stderr}${migrated.stdout}`);
    // The first API bootstraps the tenancy; the others start after it.
    apis.push(await startHerald(env, ['api']));
    await Promise.all([
      ...Array.from({ length: options.apis - 1 }, async () => void apis.push(await startHerald(env, ['api']))),
      ...Array.from({ length: options.workers }, async () => void workers.push(await startWorker(env))),
    ]);
  } catch (error) {
    await processes.close();
    throw error;
  }
  return processes;
}

/** `nodeArgs` go before the script (`--cpu-prof` is refused in NODE_OPTIONS). */
export async function startWorker(env: Record<string, string>, nodeArgs: string[] = []): Promise<HeraldWorkerProcess> {
  const child = spawn(process.execPath, [...nodeArgs, HERALD_BIN, 'worker'], { env: { ...process.env, ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 60_000;
  while (!output.includes('Herald worker consuming jobs')) {
    if (child.exitCode !== null) throw new Error(`herald worker exited early (${child.exitCode}):\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`herald worker did not start in 60 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    child,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
