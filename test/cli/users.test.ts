import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runHeraldCommand, startHerald, type HeraldProcess } from '../helpers/herald-process.js';
import { createScaleoutResources } from '../helpers/databases.js';

/**
 * `herald users create` and `herald users reset-password` through the real binary, next to a running server on the
 * same data: embedded (the same SQLite file) and scaled out (the same PostgreSQL, with Redis). The first start with
 * no user prints the one-time setup link, which works once.
 */
const PROCESS_TEST_MS = 300_000;

async function login(url: string, email: string, password: string): Promise<Response> {
  return fetch(`${url}/v1/dashboard/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
}

function setupLink(output: string): string | undefined {
  for (const line of output.split('\n')) {
    if (!line.includes('setupUrl')) continue;
    return (JSON.parse(line) as { setupUrl: string }).setupUrl;
  }
  return undefined;
}

const modes: Array<{ name: string; resources: () => Promise<Record<string, string> | undefined> }> = [
  { name: 'embedded SQLite', resources: async () => ({}) },
  {
    name: 'PostgreSQL + Redis',
    resources: async () => {
      const created = await createScaleoutResources();
      if (!created) return undefined;
      cleanups.push(() => created.drop());
      return { ...created.env, HERALD_ENCRYPTION_KEY: 'a'.repeat(64) };
    },
  },
];
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

for (const mode of modes) {
  describe(`herald users (${mode.name}, server running on the same data)`, () => {
    it(
      'prints a one-time setup link at the first start; users create and reset-password work next to the server',
      async (context) => {
        const extra = await mode.resources();
        if (!extra) return context.skip();
        const dataDir = mkdtempSync(join(tmpdir(), 'herald-users-'));
        cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
        const env = { HERALD_DATA_DIR: dataDir, ...extra };
        if (extra.DATABASE_URL) expect((await runHeraldCommand(['migrate'], env)).status).toBe(0);

        let herald: HeraldProcess | undefined = await startHerald(env);
        try {
          const link = setupLink(herald.output());
          expect(link).toMatch(new RegExp(`^${herald.url}/dashboard/setup\\?token=[A-Za-z0-9_-]{43}$`));
          const token = new URL(link!).searchParams.get('token');
          const setup = (body: object) =>
            fetch(`${herald!.url}/v1/dashboard/setup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
          const first = await setup({ token, email: 'owner@example.com', password: 'owner password 1' });
          expect(first.status).toBe(201);
          expect(first.headers.getSetCookie()[0]).toMatch(/^herald_session=/);
          const reused = await setup({ token, email: 'thief@example.com', password: 'thief password 1' });
          expect(reused.status).toBe(409);

          const created = await runHeraldCommand(['users', 'create', '--email', 'Ops@Example.com', '--password', 'ops password 1', '--role', 'viewer'], env);
          expect(created.stderr).toBe('');
          expect(created.status).toBe(0);
          expect(created.stdout).toMatch(/^created viewer ops@example\.com \([0-9a-f]{24}\)/);
          const signedIn = await login(herald.url, 'ops@example.com', 'ops password 1');
          expect(signedIn.status).toBe(200);
          expect((await signedIn.json()).data.user.role).toBe('viewer');
          const cookie = signedIn.headers.getSetCookie()[0].split(';')[0];

          const duplicate = await runHeraldCommand(['users', 'create', '--email', 'ops@example.com', '--password', 'other password', '--role', 'admin'], env);
          expect(duplicate.status).toBe(1);
          expect(duplicate.stderr).toMatch(/already exists/);
          const badRole = await runHeraldCommand(['users', 'create', '--email', 'x@example.com', '--password', 'long enough 1', '--role', 'owner'], env);
          expect(badRole.status).toBe(1);
          expect(badRole.stderr).toMatch(/role must be one of the following values: admin, viewer/);

          const reset = await runHeraldCommand(['users', 'reset-password', '--email', 'ops@example.com'], env);
          expect(reset.status).toBe(0);
          const newPassword = reset.stdout.trim();
          expect(newPassword.length).toBeGreaterThanOrEqual(16);
          expect((await login(herald.url, 'ops@example.com', 'ops password 1')).status).toBe(401);
          expect((await login(herald.url, 'ops@example.com', newPassword)).status).toBe(200);
          // The old password's session ended with the reset.
          const me = await fetch(`${herald.url}/v1/dashboard/me`, { headers: { cookie } });
          expect(me.status).toBe(401);

          const chosen = await runHeraldCommand(['users', 'reset-password', '--email', 'ops@example.com', '--password', 'chosen password 1'], env);
          expect(chosen.status).toBe(0);
          expect((await login(herald.url, 'ops@example.com', 'chosen password 1')).status).toBe(200);
          const unknown = await runHeraldCommand(['users', 'reset-password', '--email', 'nobody@example.com'], env);
          expect(unknown.status).toBe(1);
          expect(unknown.stderr).toMatch(/No user with email nobody@example.com/);

          // A restart with users in place prints no setup link.
          expect(await herald.stop()).toBe(0);
          herald = await startHerald(env);
          expect(setupLink(herald.output())).toBeUndefined();
        } finally {
          await herald?.stop();
        }
      },
      PROCESS_TEST_MS,
    );
  });
}
