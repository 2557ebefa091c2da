import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { startHerald, type HeraldProcess } from '../helpers/herald-process.js';

/**
 * Crash safety: the real server (`node bin/herald.js start`) is SIGKILLed while 1,000 triggers are in flight,
 * restarted on the same data directory, and must end with exactly one message per channel step per subscriber
 * for every trigger that was answered 201 (none lost, none duplicated).
 */
const SECRET = 'sk_crash_test_0123456789abcdef0123456789abcdef';
const TRIGGERS = 1000;
const CONCURRENCY = 32;
const KILL_AFTER = 400;
const dataDir = mkdtempSync(join(tmpdir(), 'herald-crash-'));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

/**
 * The real server on the data directory, through the suite's helper: its port is taken below the kernel's ephemeral
 * range and it is ready when it answers its own `/health/ready` (not any answer under 500 from whatever holds the port:
 * the other test files' fakes listen on port 0, and a port this file once got from `listen(0)` could be handed to one of
 * them between the probe and the bind, or between the kill and the restart).
 */
async function startServer(port?: number): Promise<HeraldProcess> {
  const herald = await startHerald({
    HERALD_DATA_DIR: dataDir,
    ...(port === undefined ? {} : { PORT: String(port) }),
    HERALD_BOOTSTRAP_SECRET_KEY: SECRET,
    LOG_LEVEL: 'error',
    HERALD_QUEUE_POLL_MS: '20',
  });
  children.push(herald.child);
  return herald;
}

function api(port: number, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `ApiKey ${SECRET}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

describe('crash safety', () => {
  // Its own deadlines: two starts (60 s each), the triggers, and the restarted queue's drain (120 s).
  it('loses and duplicates nothing across a SIGKILL with triggers in flight', { timeout: 300_000 }, async () => {
    const first = await startServer();
    const port = Number(new URL(first.url).port);
    let child = first.child;
    const workflow = await api(port, 'POST', '/v2/workflows', {
      workflowId: 'crash',
      name: 'Crash',
      steps: [
        { name: 'first', type: 'in_app', controlValues: { body: 'one {{ payload.n }}' } },
        { name: 'second', type: 'in_app', controlValues: { body: 'two {{ payload.n }}' } },
      ],
    });
    expect(workflow.status, await workflow.text()).toBe(201);

    const accepted: string[] = [];
    let next = 0;
    let answered = 0;
    const fire = async () => {
      while (next < TRIGGERS) {
        const n = next++;
        const transactionId = `crash-${n}`;
        try {
          const response = await api(port, 'POST', '/v1/events/trigger', { name: 'crash', to: [`sub-${n % 20}`, 'everyone'], payload: { n }, transactionId });
          if (response.status === 201) accepted.push(transactionId);
          await response.text();
        } catch {
          // the server died under this request: it may or may not have been accepted
        }
        answered++;
        if (answered === KILL_AFTER && child.exitCode === null) child.kill('SIGKILL');
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, fire));
    expect(child.signalCode ?? 'SIGKILL').toBe('SIGKILL');
    await new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
    expect(accepted.length).toBeGreaterThanOrEqual(KILL_AFTER - CONCURRENCY);
    expect(accepted.length).toBeLessThan(TRIGGERS);

    child = (await startServer(port)).child;
    const db = new Database(join(dataDir, 'herald.sqlite'), { readonly: true });
    try {
      const deadline = Date.now() + 120_000;
      for (;;) {
        const pending = db.prepare(`select count(*) as n from queue_jobs where state in ('waiting', 'active')`).get() as { n: number };
        const unprocessed = db.prepare(`select count(*) as n from triggers where state = 'accepted'`).get() as { n: number };
        if (pending.n === 0 && unprocessed.n === 0) break;
        if (Date.now() > deadline) throw new Error(`queue not drained: ${pending.n} jobs, ${unprocessed.n} triggers`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const failed = db.prepare(`select count(*) as n from queue_jobs where state = 'failed'`).get() as { n: number };
      expect(failed.n).toBe(0);
      const counts = db
        .prepare(`select transaction_id as tx, count(*) as n, count(distinct job_id) as jobs from messages group by transaction_id`)
        .all() as Array<{ tx: string; n: number; jobs: number }>;
      const byTransaction = new Map(counts.map((row) => [row.tx, row]));
      const wrong = accepted.filter((tx) => byTransaction.get(tx)?.n !== 4);
      expect(wrong, `transactions without exactly 4 messages: ${wrong.slice(0, 5).join(', ')}`).toEqual([]);
      // every transaction, accepted or cut off mid-request, has at most one message per step per subscriber
      expect(counts.filter((row) => row.n > 4 || row.jobs !== row.n)).toEqual([]);
      const perStep = db
        .prepare(`select count(*) as n from (select notification_id, job_id from messages group by notification_id, job_id having count(*) > 1)`)
        .get() as { n: number };
      expect(perStep.n).toBe(0);
    } finally {
      db.close();
    }

    const response = await api(port, 'GET', `/v1/messages?transactionId=${accepted[0]}`);
    expect((await response.json()).totalCount).toBe(4);
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  });
});
