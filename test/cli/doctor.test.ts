import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDoctor, type CheckResult } from '../../src/doctor.js';
import { createTestSchema, servicesAvailable, type TestSchema } from '../helpers/databases.js';
import { freePort, runHeraldCommand } from '../helpers/herald-process.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Issue #20, point 4: `herald doctor` against a healthy set-up (either mode, from HERALD_TEST_MODE) and broken ones:
 * a wrong encryption key, an unwritable data dir, an unreachable database, pending migrations, a failing integration.
 */
const postgresAvailable = await servicesAvailable(['PostgreSQL']);
const byName = (results: CheckResult[], name: string) => results.filter((result) => result.name === name || result.name.startsWith(`${name} `));

describe('herald doctor', () => {
  let server: TestServer;
  let env: Record<string, string>;
  const cleanup: Array<() => Promise<void> | void> = [];

  beforeAll(async () => {
    server = await startTestServer();
    // One stored secret (credentials are encrypted at rest) and one active integration whose live check must fail:
    // SMTP on a port nobody listens on.
    const closedPort = await freePort();
    const created = await server.request('POST', '/v1/integrations', {
      key: null,
      bearer: server.devSession,
      body: { providerId: 'nodemailer', channel: 'email', name: 'Local SMTP', identifier: 'local-smtp', active: true, check: false, credentials: { host: '127.0.0.1', port: String(closedPort), from: 'a@example.com', secure: false } },
    });
    expect(created.status, created.text).toBe(201);
    env = {
      HERALD_DATA_DIR: server.dataDir,
      HERALD_OUTBOUND_ALLOW: '127.0.0.1',
      ...(server.config.databaseUrl ? { DATABASE_URL: server.config.databaseUrl } : {}),
      ...(server.config.redisUrl ? { REDIS_URL: server.config.redisUrl } : {}),
      ...(server.config.encryptionKey ? { HERALD_ENCRYPTION_KEY: server.config.encryptionKey } : {}),
      HERALD_PROVIDER_CHECK_TIMEOUT_MS: '3000',
    };
    await server.close({ keepData: true });
  }, 60_000);
  afterAll(async () => {
    for (const step of cleanup) await step();
    rmSync(server?.dataDir ?? '/nonexistent', { recursive: true, force: true });
  });

  it('passes a healthy set-up: one line per check, exit 0', async () => {
    const results = await runDoctor({ env });
    expect(results.filter((result) => result.status === 'fail'), JSON.stringify(results)).toEqual([]);
    for (const name of ['configuration', 'data dir', 'database', 'migrations', 'encryption key', 'outbound guard', 'clock']) {
      expect(byName(results, name)[0]?.status, name).toBe('ok');
    }
    expect(byName(results, 'redis')[0]?.status).toBe(env.REDIS_URL ? 'ok' : 'skip');
    expect(byName(results, 'encryption key')[0]?.detail).toMatch(/decrypts all 1 stored integration credentials/);

    const cli = await runHeraldCommand(['doctor'], env);
    expect(cli.status, cli.stdout + cli.stderr).toBe(0);
    const lines = cli.stdout.trim().split('\n');
    expect(lines.some((line) => /^ok\s+database\s/.test(line))).toBe(true);
    expect(lines.at(-1)).toBe('no problems found');
  });

  it('fails on an encryption key that does not decrypt the stored secrets, with the fix', async () => {
    const results = await runDoctor({ env: { ...env, HERALD_ENCRYPTION_KEY: randomBytes(32).toString('hex') } });
    const [check] = byName(results, 'encryption key');
    expect(check).toMatchObject({ status: 'fail' });
    expect(check!.detail).toMatch(/1 of 1 stored integration credentials do not decrypt/);
    expect(check!.fix).toMatch(/HERALD_ENCRYPTION_KEY/);

    const cli = await runHeraldCommand(['doctor'], { ...env, HERALD_ENCRYPTION_KEY: randomBytes(32).toString('hex') });
    expect(cli.status).toBe(1);
    expect(cli.stdout).toMatch(/^FAIL\s+encryption key\s.*→ fix: /m);
    expect(cli.stdout).toMatch(/1 check failed$/m);
  });

  it('fails on an unwritable data dir', async () => {
    let dir: string;
    if (process.getuid?.() === 0) {
      dir = '/sys/kernel'; // root passes every permission bit; sysfs refuses to create a file even for root
    } else {
      dir = mkdtempSync(join(tmpdir(), 'herald-doctor-ro-'));
      chmodSync(dir, 0o500);
      cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    }
    const results = await runDoctor({ env: { HERALD_DATA_DIR: dir } });
    expect(byName(results, 'data dir')[0]).toMatchObject({ status: 'fail' });
    expect(byName(results, 'data dir')[0]!.fix).toMatch(/write access/);
  });

  it('fails on an unreachable database URL', async () => {
    const port = await freePort();
    const results = await runDoctor({ env: { HERALD_DATA_DIR: server.dataDir, DATABASE_URL: `postgresql://postgres@127.0.0.1:${port}/test` } });
    expect(byName(results, 'database')[0]).toMatchObject({ status: 'fail' });
    expect(byName(results, 'database')[0]!.fix).toMatch(/DATABASE_URL/);
    expect(byName(results, 'migrations')).toEqual([]);
  });

  it.skipIf(!postgresAvailable)('fails on pending migrations', async () => {
    const schema: TestSchema = await createTestSchema();
    cleanup.push(() => schema.drop());
    const results = await runDoctor({ env: { HERALD_DATA_DIR: server.dataDir, DATABASE_URL: schema.url } });
    expect(byName(results, 'database')[0]).toMatchObject({ status: 'ok' });
    const [migrations] = byName(results, 'migrations');
    expect(migrations).toMatchObject({ status: 'fail' });
    expect(migrations!.detail).toMatch(/pending: 0001_initial, .*0018_idempotency_leases/);
    expect(migrations!.fix).toMatch(/herald migrate/);
  });

  it('fails a bad HERALD_OUTBOUND_ALLOW entry and a bad configuration value', async () => {
    const outbound = await runDoctor({ env: { ...env, HERALD_OUTBOUND_ALLOW: '10.0.0.0/99,ok.example' } });
    expect(byName(outbound, 'outbound guard')[0]).toMatchObject({ status: 'fail' });
    const config = await runDoctor({ env: { ...env, PORT: 'eighty' } });
    expect(config).toEqual([expect.objectContaining({ name: 'configuration', status: 'fail', detail: expect.stringMatching(/PORT/) })]);
  });

  it("with --check-integrations, runs each active integration's live check", async () => {
    const results = await runDoctor({ env, checkIntegrations: true });
    const [integration] = byName(results, 'integration');
    expect(integration).toMatchObject({ name: 'integration development/local-smtp', status: 'fail' });
    expect(integration!.detail).toMatch(/nodemailer: credentials check failed/);
  }, 30_000);
});
