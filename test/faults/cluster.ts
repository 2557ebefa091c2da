import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { HERALD_BIN, runHeraldCommand, startHerald, type HeraldProcess } from '../helpers/herald-process.js';
import { startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis, type PrivateRedisOptions } from '../helpers/private-services.js';

/**
 * A scale-out Herald for fault tests: private PostgreSQL and Redis, `herald migrate`, then API and worker
 * processes (real `bin/herald.js api|worker` children), a trigger load spread over the APIs, and the checks
 * that read PostgreSQL directly afterwards.
 */
export const SECRET = 'sk_fault_test_0123456789abcdef0123456789abcdef';
export const WORKFLOW_ID = 'fault';
/** Every trigger goes to both (2 x 2 steps = 4 messages, 5 queue jobs per trigger: the CPU budget of 2 cores). */
export const SUBSCRIBERS = ['sub-a', 'sub-b'];
export const STEPS = 2;
export const MESSAGES_PER_TRIGGER = SUBSCRIBERS.length * STEPS;
/** The default prefix of `herald api|worker` (createContainer's redisPrefix). */
const REDIS_PREFIX = 'herald';

export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves when the process has exited (by any signal). */
  exited: Promise<void>;
}

export interface Cluster {
  redis: PrivateRedis;
  postgres: PrivatePostgres;
  apis: HeraldProcess[];
  workers: WorkerProcess[];
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startCluster(options: { apis: number; workers: number; redis?: PrivateRedisOptions }): Promise<Cluster> {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-faults-'));
  const [redis, postgres] = await Promise.all([startPrivateRedis(options.redis), startPrivatePostgres()]);
  const env: Record<string, string> = {
    DATABASE_URL: postgres.url,
    REDIS_URL: redis.url,
    HERALD_DATA_DIR: dataDir,
    // Every process must share one master key (credentials, session tokens).
    HERALD_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    HERALD_BOOTSTRAP_SECRET_KEY: SECRET,
    LOG_LEVEL: 'warn',
  };
  const apis: HeraldProcess[] = [];
  const workers: WorkerProcess[] = [];
  const cluster: Cluster = {
    redis,
    postgres,
    apis,
    workers,
    env,
    async close() {
      await Promise.all([
        ...apis.map((api) => api.stop('SIGKILL')),
        ...workers.map((worker) => {
          if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
          return worker.exited;
        }),
      ]);
      await Promise.allSettled([redis.close(), postgres.close()]);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  try {
    const migrated = await runHeraldCommand(['migrate'], env);
    if (migrated.status !== 0) throw new Error(`herald migrate failed: ${migrated.stderr}${migrated.stdout}`);
    // One after the other: the first start bootstraps the tenancy with the secret key.
    const startedAt = Date.now();
    // The first API bootstraps the tenancy (the secret key); the other processes then start side by side.
    apis.push(await startHerald({ ...env, LOG_LEVEL: 'info' }, ['api']));
    const others = await Promise.allSettled([
      ...Array.from({ length: options.apis - 1 }, () => startHerald({ ...env, LOG_LEVEL: 'info' }, ['api']).then((api) => void apis.push(api))),
      ...Array.from({ length: options.workers }, () => startWorkerProcess(env).then((worker) => void workers.push(worker))),
    ]);
    const failed = others.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    if (process.env.HERALD_FAULTS_TRACE) console.info('[trace] cluster started in', Date.now() - startedAt);
  } catch (error) {
    await cluster.close();
    throw error;
  }
  return cluster;
}

async function startWorkerProcess(env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [HERALD_BIN, 'worker'], {
    env: { ...process.env, ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 30_000;
  while (!output.includes('Herald worker consuming jobs')) {
    if (child.exitCode !== null) throw new Error(`herald worker exited early (${child.exitCode}):\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`herald worker did not start in 30 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { child, output: () => output, exited };
}

export async function api(baseUrl: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `ApiKey ${SECRET}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
}

export async function createFaultWorkflow(cluster: Cluster): Promise<void> {
  const response = await api(cluster.apis[0].url, 'POST', '/v2/workflows', {
    workflowId: WORKFLOW_ID,
    name: 'Fault',
    steps: [
      { name: 'first', type: 'in_app', controlValues: { body: 'one {{ payload.n }}' } },
      { name: 'second', type: 'in_app', controlValues: { body: 'two {{ payload.n }}' } },
    ],
  });
  if (response.status !== 201) throw new Error(`workflow not created: ${response.status} ${await response.text()}`);
}

// ---- load ----------------------------------------------------------------------------------------------

export interface TriggerLoadResult {
  /** transactionIds answered 201. */
  accepted: string[];
  /** transactionIds never answered 201 (given up, or cut off). */
  abandoned: string[];
  unavailable: number;
  /** 503s without a Retry-After header. */
  unavailableWithoutRetryAfter: number;
  /** Any other non-201 answer: status and body. */
  unexpected: Array<{ status: number; body: string }>;
  networkErrors: number;
  durationMs: number;
}

export interface TriggerLoadOptions {
  prefix: string;
  total: number;
  concurrency: number;
  /** Called after each trigger is settled (201 or given up) with how many are settled. */
  onSettled?: (settled: number) => void;
  /**
   * Retries a 503 or a connection error with the same transactionId (the trigger is idempotent on it),
   * pausing this long, as a client honouring Retry-After would (shortened to keep the test quick).
   */
  retryPauseMs: number;
  /** Gives a trigger up after this long of failures. */
  giveUpAfterMs: number;
}

/** Fires `total` triggers over every API process in turn, at most `concurrency` at once. */
export async function fireTriggers(cluster: Cluster, options: TriggerLoadOptions): Promise<TriggerLoadResult> {
  const result: TriggerLoadResult = { accepted: [], abandoned: [], unavailable: 0, unavailableWithoutRetryAfter: 0, unexpected: [], networkErrors: 0, durationMs: 0 };
  const startedAt = Date.now();
  let next = 0;
  let settled = 0;
  const fireOne = async (n: number) => {
    const transactionId = `${options.prefix}-${n}`;
    const firstTry = Date.now();
    for (let attempt = 0; ; attempt++) {
      const baseUrl = cluster.apis[(n + attempt) % cluster.apis.length].url;
      try {
        const response = await api(baseUrl, 'POST', '/v1/events/trigger', {
          name: WORKFLOW_ID,
          to: SUBSCRIBERS,
          payload: { n },
          transactionId,
        });
        const body = await response.text();
        if (response.status === 201) {
          result.accepted.push(transactionId);
          return;
        }
        if (response.status === 503) {
          result.unavailable++;
          if (!response.headers.get('retry-after')) result.unavailableWithoutRetryAfter++;
        } else {
          result.unexpected.push({ status: response.status, body });
          if (response.status < 500) break;
        }
      } catch {
        result.networkErrors++;
        const dead = cluster.apis.find((candidate) => candidate.child.exitCode !== null || candidate.child.signalCode !== null);
        if (dead) throw new Error(`an API process exited (${dead.child.exitCode ?? dead.child.signalCode}):\n${dead.output().slice(-4000)}`);
      }
      if (Date.now() - firstTry > options.giveUpAfterMs) break;
      await new Promise((resolve) => setTimeout(resolve, options.retryPauseMs));
    }
    result.abandoned.push(transactionId);
  };
  const lane = async () => {
    while (next < options.total) {
      await fireOne(next++);
      options.onSettled?.(++settled);
      if (process.env.HERALD_FAULTS_TRACE && settled % 200 === 0) console.info('[trace] settled', settled, Date.now() - startedAt);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, lane));
  result.durationMs = Date.now() - startedAt;
  return result;
}

// ---- checks --------------------------------------------------------------------------------------------

async function withPostgres<T>(cluster: Cluster, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: cluster.postgres.url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** BullMQ counts of the Herald queue, read from the private Redis. */
export async function queueCounts(cluster: Cluster): Promise<Record<string, number>> {
  const connection = new Redis(cluster.redis.url, { maxRetriesPerRequest: 1, retryStrategy: () => null });
  connection.on('error', () => undefined);
  const queue = new Queue('jobs', { connection, prefix: REDIS_PREFIX });
  try {
    return await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'failed', 'completed');
  } finally {
    await queue.close().catch(() => undefined);
    connection.disconnect();
  }
}

export interface DeliveryReport {
  /** Accepted transactions whose message count is not MESSAGES_PER_TRIGGER. */
  wrongCount: Array<{ transactionId: string; messages: number }>;
  /** Any transaction with more than one message for one (subscriber, step). */
  duplicated: string[];
  /** Message statuses other than `sent`. */
  statuses: string[];
  /** Jobs of accepted transactions not `completed`. */
  unfinishedJobs: number;
  /** Accepted transactions whose trigger is not `processed`. */
  unprocessedTriggers: number;
  totalMessages: number;
  queue: Record<string, number>;
  drainMs: number;
}

/**
 * Waits until every accepted transaction has all its messages and the queue holds nothing runnable
 * (or the deadline passes), then reports what PostgreSQL holds.
 */
export async function waitForDelivery(cluster: Cluster, accepted: string[], timeoutMs: number): Promise<DeliveryReport> {
  const startedAt = Date.now();
  const deadline = startedAt + timeoutMs;
  for (;;) {
    const complete = await withPostgres(cluster, async (client) => {
      const { rows } = await client.query<{ n: string }>(
        `select count(*) as n from (select transaction_id from messages where transaction_id = any($1) group by transaction_id having count(*) >= $2) t`,
        [accepted, MESSAGES_PER_TRIGGER],
      );
      return Number(rows[0].n) === accepted.length;
    }).catch((error) => {
      if (process.env.HERALD_FAULTS_TRACE) console.info('[trace] pg', error);
      return false;
    });
    const counts = complete ? await queueCounts(cluster).catch(() => undefined) : undefined;
    const idle = counts !== undefined && counts.waiting + counts.active + counts.delayed + counts.prioritized === 0;
    if (process.env.HERALD_FAULTS_TRACE) console.info('[trace] drain', Date.now() - startedAt, complete, JSON.stringify(counts ?? await queueCounts(cluster).catch((error) => String(error))));
    if ((complete && idle) || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const drainMs = Date.now() - startedAt;
  const queue = await queueCounts(cluster);
  return withPostgres(cluster, async (client) => {
    const perTransaction = await client.query<{ tx: string; n: string }>(
      `select transaction_id as tx, count(*) as n from messages group by transaction_id`,
    );
    const counts = new Map(perTransaction.rows.map((row) => [row.tx, Number(row.n)]));
    const wrongCount = accepted
      .filter((tx) => counts.get(tx) !== MESSAGES_PER_TRIGGER)
      .map((transactionId) => ({ transactionId, messages: counts.get(transactionId) ?? 0 }));
    const duplicates = await client.query<{ tx: string }>(
      `select distinct m.transaction_id as tx from messages m join jobs j on j.id = m.job_id
       group by m.transaction_id, m.external_subscriber_id, j.step_index having count(*) > 1`,
    );
    const statuses = await client.query<{ status: string }>(`select distinct status from messages where status <> 'sent'`);
    const jobs = await client.query<{ n: string }>(
      `select count(*) as n from jobs where transaction_id = any($1) and status <> 'completed'`,
      [accepted],
    );
    const triggers = await client.query<{ n: string }>(
      `select count(*) as n from triggers where transaction_id = any($1) and state <> 'processed'`,
      [accepted],
    );
    const total = await client.query<{ n: string }>(`select count(*) as n from messages`);
    return {
      wrongCount,
      duplicated: duplicates.rows.map((row) => row.tx),
      statuses: statuses.rows.map((row) => row.status),
      unfinishedJobs: Number(jobs.rows[0].n),
      unprocessedTriggers: Number(triggers.rows[0].n),
      totalMessages: Number(total.rows[0].n),
      queue,
      drainMs,
    };
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
