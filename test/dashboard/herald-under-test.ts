import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createTestSchema, scaleoutModeRequested, type TestSchema } from '../helpers/databases.js';
import { runHeraldCommand, startHerald, type HeraldProcess } from '../helpers/herald-process.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/private-services.js';
import { startWorker, type HeraldWorkerProcess } from '../helpers/scaleout-processes.js';

/**
 * Herald started the way an operator starts it, for the dashboard's browser tests:
 * embedded = one `herald start` on a fresh data directory; scale-out (HERALD_TEST_MODE=scaleout) =
 * `herald migrate`, then two `herald api` processes and one `herald worker` over a fresh PostgreSQL schema and
 * a private Redis (BullMQ queue names are not prefixed per test, so a shared Redis would mix test files).
 * The first API process's output carries the one-time setup link.
 */
export interface HeraldUnderTest {
  mode: 'embedded' | 'scaleout';
  /** The API process the browser uses. */
  url: string;
  /** Another API process (scale-out), or the same one (embedded). */
  otherUrl: string;
  secretKey: string;
  /** The setup link printed by the first start. */
  setupUrl(): string;
  output(): string;
  close(): Promise<void>;
}

export async function startHeraldUnderTest(extraEnv: Record<string, string> = {}): Promise<HeraldUnderTest> {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-dash-'));
  const secretKey = `sk_dash_${randomBytes(16).toString('hex')}`;
  const env: Record<string, string> = {
    HERALD_DATA_DIR: dataDir,
    HERALD_BOOTSTRAP_SECRET_KEY: secretKey,
    HERALD_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'info',
    // The scaled-out worker shares the machine with the test runner's other files: at its default lower priority
    // (HERALD_WORKER_NICE=19) a busy suite starved it, and a delivery the browser waited for came after the test's
    // deadline (CI of stop 45). test/helpers/scaleout-processes.ts does the same.
    HERALD_WORKER_NICE: '0',
    ...extraEnv,
  };
  const scaleout = scaleoutModeRequested();
  let schema: TestSchema | undefined;
  let redis: PrivateRedis | undefined;
  const processes: HeraldProcess[] = [];
  let worker: HeraldWorkerProcess | undefined;
  const cleanup = async () => {
    await Promise.all(processes.map((process) => process.stop()));
    await worker?.stop();
    await redis?.close();
    await schema?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    if (scaleout) {
      schema = await createTestSchema();
      redis = await startPrivateRedis();
      env.DATABASE_URL = schema.url;
      env.REDIS_URL = redis.url;
      const migrated = await runHeraldCommand(['migrate'], env);
      if (migrated.status !== 0) throw new Error(`herald migrate failed: ${migrated.stderr}${migrated.stdout}`);
      processes.push(await startHerald(env, ['api']));
      processes.push(await startHerald(env, ['api']));
      // Consuming before the tests start (its start-up line, as the other scaled-out tests wait for): the first delivery a
      // test waits for must not also wait for the worker to start on a loaded machine, and a worker that fails to start
      // fails here with its output.
      worker = await startWorker(env);
    } else {
      processes.push(await startHerald(env, ['start']));
    }
  } catch (error) {
    await cleanup();
    throw error;
  }
  const first = processes[0];
  return {
    mode: scaleout ? 'scaleout' : 'embedded',
    url: first.url,
    otherUrl: (processes[1] ?? first).url,
    secretKey,
    output: () => [...processes.map((process) => process.output()), worker?.output() ?? ''].join('\n'),
    setupUrl() {
      const printed = /https?:\/\/[^\s"]+\/dashboard\/setup\?token=[A-Za-z0-9_\-.%]+/.exec(processes.map((process) => process.output()).join('\n'));
      if (!printed) throw new Error(`no setup link in the output:\n${first.output()}`);
      // The link names the configured host; the test reaches the same process on 127.0.0.1.
      const link = new URL(printed[0]);
      return `${first.url}${link.pathname}${link.search}`;
    },
    close: cleanup,
  };
}

/** A call of the Herald's REST API with its secret key: the status, the body parsed (undefined when empty) and as text. */
export async function callApi(herald: HeraldUnderTest, method: string, path: string, body?: unknown): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(herald.url + path, {
    method,
    headers: { authorization: `ApiKey ${herald.secretKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, text };
}
