import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { HERALD_BIN, runHeraldCommand, startHerald, type HeraldProcess } from '../helpers/herald-process.js';

/**
 * `herald backup` and `herald restore` against real processes: a backup taken while a server accepts triggers holds
 * every trigger acknowledged before it started (delivered after the restore, when it had not been yet), with the
 * encryption key (restored credentials decrypt); a restore refuses a data dir a running server holds and a non-empty
 * one; with DATABASE_URL, backup points to the PostgreSQL procedure.
 */
const SECRET = 'sk_backup_test_0123456789abcdef0123456789abcdef';
const root = mkdtempSync(join(tmpdir(), 'herald-backup-'));
const processes: HeraldProcess[] = [];

afterAll(async () => {
  for (const process of processes) await process.stop('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

function api(server: HeraldProcess, method: string, path: string, body?: unknown, auth = `ApiKey ${SECRET}`): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** A CLI command run without blocking this process's event loop (the load keeps running meanwhile). */
function runAsync(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [HERALD_BIN, ...args], { env: { ...process.env, LOG_LEVEL: 'silent', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

describe('herald backup and restore', () => {
  it('backs up under load and restores into a new data dir holding everything acknowledged before the backup', { timeout: 240_000 }, async () => {
    const source = join(root, 'source');
    const env = { HERALD_DATA_DIR: source, HERALD_BOOTSTRAP_SECRET_KEY: SECRET, HERALD_QUEUE_POLL_MS: '20', LOG_LEVEL: 'error' };
    const server = await startHerald(env);
    processes.push(server);
    const workflow = await api(server, 'POST', '/v2/workflows', {
      workflowId: 'backup',
      name: 'Backup',
      steps: [{ name: 'note', type: 'in_app', controlValues: { body: 'n={{ payload.n }}' } }],
    });
    expect(workflow.status, await workflow.text()).toBe(201);
    const integration = await api(server, 'POST', '/v1/integrations', {
      providerId: 'sendgrid',
      channel: 'email',
      credentials: { apiKey: 'SG.backup-secret', from: 'noreply@example.com', senderName: 'Herald' },
      active: true,
      check: false,
      identifier: 'sendgrid-backup',
    });
    expect(integration.status, await integration.text()).toBe(201);

    // Load: 16 clients trigger continuously; each 201 is stamped with when it arrived.
    const acknowledged: Array<{ transactionId: string; at: number }> = [];
    let stop = false;
    let sent = 0;
    const client = async () => {
      while (!stop) {
        const transactionId = `backup-${sent++}`;
        const response = await api(server, 'POST', '/v1/events/trigger', { name: 'backup', to: `sub-${sent % 10}`, payload: { n: sent }, transactionId });
        await response.text();
        if (response.status === 201) acknowledged.push({ transactionId, at: performance.now() });
      }
    };
    const load = Promise.all(Array.from({ length: 16 }, client));
    while (acknowledged.length < 300) await new Promise((resolve) => setTimeout(resolve, 20));

    const archive = join(root, 'herald-backup.tar.gz');
    const backupStartedAt = performance.now();
    const backup = await runAsync(['backup', '--to', archive], env);
    const backupEndedAt = performance.now();
    const duringBackup = acknowledged.filter(({ at }) => at > backupStartedAt && at < backupEndedAt).length;
    stop = true;
    await load;
    expect(backup.status, backup.stderr).toBe(0);
    expect(backup.stdout).toContain(`backup written to ${archive}`);
    expect(backup.stderr).toMatch(/includes the encryption key/);
    expect(statSync(archive).mode & 0o777).toBe(0o600);
    // The server kept acknowledging triggers while the copy ran: it was an online backup.
    expect(duringBackup).toBeGreaterThan(0);
    const before = acknowledged.filter(({ at }) => at < backupStartedAt).map(({ transactionId }) => transactionId);
    expect(before.length).toBeGreaterThanOrEqual(300);

    // Refusals: the running server's data dir (in use, and not empty), then a non-empty dir.
    const inUse = await runHeraldCommand(['restore', '--from', archive, '--data-dir', source], {});
    expect(inUse.status).toBe(1);
    expect(inUse.stderr).toContain(`refusing to restore: a Herald server (pid ${server.child.pid}) is running on ${source}`);
    const occupied = join(root, 'occupied');
    mkdirSync(occupied);
    writeFileSync(join(occupied, 'notes.txt'), 'keep me');
    const nonEmpty = await runHeraldCommand(['restore', '--from', archive, '--data-dir', occupied], {});
    expect(nonEmpty.status).toBe(1);
    expect(nonEmpty.stderr).toContain(`refusing to restore: ${occupied} is not empty`);
    expect(existsSync(join(occupied, 'herald.sqlite'))).toBe(false);

    const target = join(root, 'restored');
    const restored = await runHeraldCommand(['restore', '--from', archive], { HERALD_DATA_DIR: target });
    expect(restored.status, restored.stderr).toBe(0);
    expect(restored.stdout).toContain(`into ${target}`);
    expect(statSync(join(target, 'encryption.key')).mode & 0o777).toBe(0o600);

    const copy = await startHerald({ HERALD_DATA_DIR: target, HERALD_QUEUE_POLL_MS: '20', LOG_LEVEL: 'error' });
    processes.push(copy);
    // Every trigger acknowledged before the backup is in the copy, and is delivered (now, if it had not been yet).
    const db = new Database(join(target, 'herald.sqlite'), { readonly: true });
    try {
      const deadline = Date.now() + 120_000;
      for (;;) {
        const pending = db.prepare(`select count(*) as n from queue_jobs where state in ('waiting', 'active')`).get() as { n: number };
        const unprocessed = db.prepare(`select count(*) as n from triggers where state = 'accepted'`).get() as { n: number };
        if (pending.n === 0 && unprocessed.n === 0) break;
        if (Date.now() > deadline) throw new Error(`restored queue not drained: ${pending.n} jobs, ${unprocessed.n} triggers`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const triggers = new Set((db.prepare('select transaction_id as tx from triggers').all() as Array<{ tx: string }>).map((row) => row.tx));
      expect(before.filter((tx) => !triggers.has(tx))).toEqual([]);
      const messages = new Map(
        (db.prepare('select transaction_id as tx, count(*) as n from messages group by transaction_id').all() as Array<{ tx: string; n: number }>).map((row) => [row.tx, row.n]),
      );
      expect(before.filter((tx) => messages.get(tx) !== 1)).toEqual([]);
    } finally {
      db.close();
    }
    // Through the API of the restored server too, with the credentials decrypted by the restored key.
    const listed = await api(copy, 'GET', `/v1/messages?transactionId=${before[before.length - 1]}`);
    expect((await listed.json()).totalCount).toBe(1);
    const token = await runHeraldCommand(['token', 'create', '--environment', 'development'], { HERALD_DATA_DIR: target });
    expect(token.status, token.stderr).toBe(0);
    const integrations = await api(copy, 'GET', '/v1/integrations', undefined, `Bearer ${token.stdout.trim()}`);
    const found = ((await integrations.json()).data as Array<{ identifier: string; credentials?: { apiKey?: string } }>).find((entry) => entry.identifier === 'sendgrid-backup');
    expect(found?.credentials?.apiKey).toBe('SG.backup-secret');

    // A stopped server's data dir is no longer in use (its pid file goes with it); it is still not empty.
    await copy.stop();
    const afterStop = await runHeraldCommand(['restore', '--from', archive, '--data-dir', target], {});
    expect(afterStop.stderr).toContain(`refusing to restore: ${target} is not empty`);
    await server.stop();
  });

  it('refuses a data dir whose database another process holds open, without a pid file', { timeout: 120_000 }, async () => {
    const dir = join(root, 'held');
    mkdirSync(dir);
    const holder = new Database(join(dir, 'herald.sqlite'));
    holder.pragma('journal_mode = WAL');
    holder.exec('create table t (a)');
    try {
      const result = await runHeraldCommand(['restore', '--from', join(root, 'herald-backup.tar.gz'), '--data-dir', dir], {});
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(`refusing to restore: ${join(dir, 'herald.sqlite')} is open in another process`);
    } finally {
      holder.close();
    }
  });

  it('points to the PostgreSQL procedure when DATABASE_URL is set, refuses to overwrite a file, and leaves the key out when asked', { timeout: 180_000 }, async () => {
    const result = await runHeraldCommand(['backup', '--to', join(root, 'pg.tar.gz')], { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/test' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('pg_dump');
    expect(result.stderr).toContain('docs/operations-data.md');
    expect(existsSync(join(root, 'pg.tar.gz'))).toBe(false);
    const existing = join(root, 'exists.tar.gz');
    writeFileSync(existing, 'x');
    const refused = await runHeraldCommand(['backup', '--to', existing], { HERALD_DATA_DIR: join(root, 'restored') });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('already exists');

    // --no-key: the archive has no key, both commands say it must be kept separately.
    const keyless = join(root, 'keyless.tar.gz');
    const made = await runHeraldCommand(['backup', '--to', keyless, '--no-key'], { HERALD_DATA_DIR: join(root, 'restored') });
    expect(made.status, made.stderr).toBe(0);
    expect(made.stderr).toContain('is NOT in the backup: keep it separately');
    expect(spawnSync('tar', ['tzf', keyless], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).sort()).toEqual(['herald.sqlite', 'manifest.json']);
    const restored = await runHeraldCommand(['restore', '--from', keyless, '--data-dir', join(root, 'keyless')], {});
    expect(restored.status, restored.stderr).toBe(0);
    expect(restored.stderr).toContain('the backup has no encryption key');
    expect(existsSync(join(root, 'keyless', 'encryption.key'))).toBe(false);
  });
});
