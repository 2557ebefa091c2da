import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startHerald } from '../helpers/herald-process.js';

/**
 * An idle embedded `herald start` does not load what only scale-out or a first send needs (container.ts,
 * socket-server.ts, outbound.ts, email/*.ts import them on use): they were ~15 MB of its memory.
 */
const PROBE = fileURLToPath(new URL('../helpers/loaded-packages-probe.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'herald-footprint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('an idle embedded herald start', () => {
  it('has not loaded pg, ioredis, BullMQ, the socket.io Redis adapter or emitter, undici or nodemailer', async () => {
    const output = join(dir, 'packages.json');
    const herald = await startHerald({ HERALD_DATA_DIR: join(dir, 'data'), NODE_OPTIONS: `--import=${PROBE}`, HERALD_PROBE_OUTPUT: output });
    let loaded: string[];
    try {
      herald.child.kill('SIGUSR2');
      for (let waited = 0; !existsSync(output) && waited < 10_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
      loaded = JSON.parse(readFileSync(output, 'utf8')) as string[];
    } finally {
      await herald.stop();
    }
    // The probe sees what the server loaded.
    expect(loaded).toEqual(expect.arrayContaining(['fastify', 'socket.io', 'better-sqlite3']));
    for (const name of ['pg', 'ioredis', 'bullmq', '@socket.io/redis-adapter', '@socket.io/redis-emitter', 'undici', 'nodemailer']) {
      expect(loaded, name).not.toContain(name);
    }
  }, 120_000);
});
