import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runHeraldCommand, startHerald } from '../helpers/herald-process.js';

/**
 * The README's promise, through the real binary: `npm start` on an empty data directory bootstraps an
 * organization with two environments and prints each secret key once; the key answers on the API.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'herald-start-'));
const env = { HERALD_DATA_DIR: dataDir, HERALD_BOOTSTRAP_SECRET_KEY: 'bootstrap-dev-key-for-automation' };

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function printedIdentifiers(output: string): Record<string, string> {
  const identifiers: Record<string, string> = {};
  for (const line of output.split('\n')) {
    if (!line.includes('applicationIdentifier')) continue;
    const entry = JSON.parse(line) as { environment: string; applicationIdentifier: string };
    identifiers[entry.environment] = entry.applicationIdentifier;
  }
  return identifiers;
}

function printedKeys(output: string): Record<string, string> {
  const keys: Record<string, string> = {};
  for (const line of output.split('\n')) {
    if (!line.includes('secretKey')) continue;
    const entry = JSON.parse(line) as { environment: string; secretKey: string };
    keys[entry.environment] = entry.secretKey;
  }
  return keys;
}

describe('herald start (embedded)', () => {
  // Each case starts real processes (tsx compiles the sources at start-up): generous time on a loaded machine.
  const PROCESS_TEST_MS = 120_000;

  it('bootstraps on the first start, prints each key once, and serves the API with them', async () => {
    const herald = await startHerald(env);
    try {
      const keys = printedKeys(herald.output());
      expect(Object.keys(keys).sort()).toEqual(['development', 'production']);
      expect(keys.development).toBe('bootstrap-dev-key-for-automation');
      expect(keys.production).toMatch(/^[0-9a-f]{64}$/);

      const response = await fetch(`${herald.url}/v1/integrations`, { headers: { authorization: `ApiKey ${keys.development}` } });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ data: expect.any(Array) });

      // The public application identifier is printed with each key, and is the one the API reports.
      const identifiers = printedIdentifiers(herald.output());
      const me = await fetch(`${herald.url}/v1/environments/me`, { headers: { authorization: `ApiKey ${keys.development}` } });
      expect(((await me.json()) as { data: { identifier: string } }).data.identifier).toBe(identifiers.development);
      expect(identifiers.production).toMatch(/^[A-Za-z0-9_-]{12}$/);

      const prod = await fetch(`${herald.url}/v1/integrations`, { headers: { authorization: `ApiKey ${keys.production}` } });
      expect(prod.status).toBe(200);
      const unknown = await fetch(`${herald.url}/v1/integrations`, { headers: { authorization: 'ApiKey nope' } });
      expect(unknown.status).toBe(401);
    } finally {
      expect(await herald.stop()).toBe(0);
    }
    // The key file is private to the owner.
    expect(statSync(join(dataDir, 'encryption.key')).mode & 0o077).toBe(0);
  }, PROCESS_TEST_MS);

  it('does not bootstrap or print keys again on a restart, and the old key still works', async () => {
    const herald = await startHerald(env);
    try {
      expect(printedKeys(herald.output())).toEqual({});
      const response = await fetch(`${herald.url}/v1/integrations`, { headers: { authorization: 'ApiKey bootstrap-dev-key-for-automation' } });
      expect(response.status).toBe(200);
    } finally {
      await herald.stop();
    }
  }, PROCESS_TEST_MS);

  it('migrates with only the database: an unreachable REDIS_URL does not matter', async () => {
    const migrateDir = mkdtempSync(join(tmpdir(), 'herald-migrate-'));
    try {
      const first = await runHeraldCommand(['migrate'], { HERALD_DATA_DIR: migrateDir, REDIS_URL: 'redis://127.0.0.1:1/0' });
      expect(first.stderr).toBe('');
      expect(first.status).toBe(0);
      expect(first.stdout).toMatch(/^applied: 0001_/);
      const again = await runHeraldCommand(['migrate'], { HERALD_DATA_DIR: migrateDir, REDIS_URL: 'redis://127.0.0.1:1/0' });
      expect(again.stdout.trim()).toBe('schema is up to date');
    } finally {
      rmSync(migrateDir, { recursive: true, force: true });
    }
  }, PROCESS_TEST_MS);

  it('creates keys and session tokens from the CLI', async () => {
    const created = await runHeraldCommand(['keys', 'create', '--environment', 'production'], env);
    expect(created.status).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^[0-9a-f]{64}$/);

    const token = await runHeraldCommand(['token', 'create', '--environment', 'development', '--ttl', '1h'], env);
    expect(token.status).toBe(0);
    const bearer = token.stdout.trim();
    expect(bearer.split('.')).toHaveLength(3);

    const listed = await runHeraldCommand(['keys'], env);
    expect(listed.status).toBe(0);
    expect(listed.stdout).toMatch(/^development\tapplicationIdentifier=[A-Za-z0-9_-]{12}\tkeys=1\t/m);
    expect(listed.stdout).toMatch(/^production\tapplicationIdentifier=[A-Za-z0-9_-]{12}\tkeys=2\tkeys usable for Inbox HMAC=2$/m);

    const unknownEnvironment = await runHeraldCommand(['keys', 'create', '--environment', 'staging'], env);
    expect(unknownEnvironment.status).toBe(1);
    expect(unknownEnvironment.stderr).toContain('Environment staging not found');

    const herald = await startHerald(env);
    try {
      const byKey = await fetch(`${herald.url}/v1/integrations`, { headers: { authorization: `ApiKey ${key}` } });
      expect(byKey.status).toBe(200);
      const bySession = await fetch(`${herald.url}/v1/integrations`, { headers: { authorization: `Bearer ${bearer}` } });
      expect(bySession.status).toBe(200);
    } finally {
      await herald.stop();
    }
  }, PROCESS_TEST_MS);
});
