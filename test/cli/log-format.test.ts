import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { formatBanner, formatLogLine, GatheredLines, usePrettyLogs } from '../../src/logging.js';
import { startHerald, type HeraldProcess } from '../helpers/herald-process.js';

/**
 * Issue #20, point 3: readable logs at a terminal (forced here with HERALD_LOG_FORMAT=pretty, since a test's stdout is
 * a pipe): the first start's banner and one line per request; JSON lines without a terminal or with =json.
 */
const SECRET = 'sk_logformat_test_0123456789abcdef0123456789ab';
const dirs: string[] = [];
const processes: HeraldProcess[] = [];
afterAll(async () => {
  for (const herald of processes) await herald.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function freshDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'herald-logs-'));
  dirs.push(dir);
  return dir;
}

async function waitForOutput(herald: HeraldProcess, pattern: RegExp, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(herald.output());
    if (match) return match[0];
    if (Date.now() > deadline) throw new Error(`no ${pattern} in the output:\n${herald.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// Embedded processes on purpose, in either test mode: the output format does not depend on the storage.
const embedded = { DATABASE_URL: '', REDIS_URL: '' };

describe('log formats', () => {
  it('chooses pretty at a terminal unless forced', () => {
    expect(usePrettyLogs('auto', true)).toBe(true);
    expect(usePrettyLogs('auto', false)).toBe(false);
    expect(usePrettyLogs('pretty', false)).toBe(true);
    expect(usePrettyLogs('json', true)).toBe(false);
  });

  it('formats a request on one line, and other lines with their fields', () => {
    const time = Date.parse('2026-11-25T10:11:12.345Z');
    expect(formatLogLine(JSON.stringify({ level: 30, time, pid: 1, hostname: 'h', reqId: 'req-1', method: 'POST', url: '/v1/events/trigger', statusCode: 201, ms: 3, msg: 'request' }))).toBe(
      '10:11:12.345 INFO  POST /v1/events/trigger 201 3 ms\n',
    );
    expect(formatLogLine(JSON.stringify({ level: 40, time, pid: 1, hostname: 'h', jobs: 2, msg: 'queue closed' }))).toBe('10:11:12.345 WARN  queue closed  jobs=2\n');
    const withError = formatLogLine(JSON.stringify({ level: 50, time, msg: 'boom', err: { message: 'bad', stack: 'Error: bad\n    at x' } }));
    expect(withError.split('\n')[0]).toBe('10:11:12.345 ERROR boom');
    expect(withError).toContain('    Error: bad');
    expect(formatLogLine('not json')).toBe('not json\n');
    const banner = formatBanner({ url: 'http://127.0.0.1:3000', keys: [{ environment: 'development', secretKey: 'sk_x', applicationIdentifier: 'app1' }], dataDir: '/data' });
    expect(banner).toMatch(/development key\s+sk_x/);
  });

  it('HERALD_LOG_FORMAT=pretty: a banner on the first start only, and one readable line per request', { timeout: 120_000 }, async () => {
    const dataDir = freshDataDir();
    const env = { ...embedded, HERALD_DATA_DIR: dataDir, HERALD_BOOTSTRAP_SECRET_KEY: SECRET, HERALD_LOG_FORMAT: 'pretty' };
    const herald = await startHerald(env);
    processes.push(herald);
    await waitForOutput(herald, /The secret keys are shown only this once/);
    const output = herald.output();
    expect(output).toContain('Herald is running');
    expect(output).toMatch(new RegExp(`API\\s+${herald.url.replace(/[.]/g, '\\.')}\\n`));
    expect(output).toContain(`${herald.url}/dashboard`);
    expect(output).toMatch(/First admin\s+http:\/\/\S+\/dashboard\S*token\S*\s+\(one-time link\)/);
    expect(output).toMatch(new RegExp(`development key\\s+${SECRET}`));
    expect(output).toMatch(/development app id\s+\S+/);
    expect(output).toMatch(/production key\s+[0-9a-z_]{32,}\n/);
    expect(output).toContain(`Data `);
    expect(output).toContain(dataDir);
    // Each secret key appears once: in the banner, not in a log line as well.
    expect(output.split(SECRET).length - 1).toBe(1);

    const response = await fetch(`${herald.url}/v1/subscribers?limit=5`, { headers: { authorization: `ApiKey ${SECRET}` } });
    expect(response.status).toBe(200);
    await waitForOutput(herald, /^\d\d:\d\d:\d\d\.\d{3} INFO {2}GET \/v1\/subscribers 200 \d+ ms$/m);
    expect(herald.output().split('\n').filter((line) => line.startsWith('{'))).toEqual([]);
    expect(await herald.stop()).toBe(0);

    const again = await startHerald(env);
    processes.push(again);
    await waitForOutput(again, /Herald listening/);
    expect(again.output()).not.toContain('Herald is running');
    expect(again.output()).not.toContain(SECRET);
  });

  it('without a terminal (or with HERALD_LOG_FORMAT=json), every line is JSON, keys included', { timeout: 120_000 }, async () => {
    for (const format of [undefined, 'json']) {
      const env: Record<string, string> = { ...embedded, HERALD_DATA_DIR: freshDataDir(), HERALD_BOOTSTRAP_SECRET_KEY: SECRET };
      if (format) env.HERALD_LOG_FORMAT = format;
      const herald = await startHerald(env);
      processes.push(herald);
      await fetch(`${herald.url}/v1/subscribers`, { headers: { authorization: `ApiKey ${SECRET}` } });
      await waitForOutput(herald, /"msg":"request"/);
      const lines = herald.output().split('\n').filter((line) => line.trim() !== '');
      for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
      expect(lines.map((line) => JSON.parse(line)).find((entry) => entry.secretKey === SECRET)).toMatchObject({ environment: 'development' });
      expect(herald.output()).not.toContain('Herald is running');
      expect(await herald.stop()).toBe(0);
    }
  });
});

describe('JSON log lines under load', () => {
  it('go out in few writes, none lost when the process exits at once', { timeout: 60_000 }, async () => {
    // A child process logs 60 lines through the real logger, one every millisecond or so (each after the previous
    // one's write has had time to finish, as under load), counts its writes to stdout, and exits at once.
    const script = `
      import fs from 'node:fs';
      let writes = 0;
      for (const name of ['write', 'writeSync', 'writev', 'writevSync']) {
        const original = fs[name];
        fs[name] = function (fd, ...rest) { if (fd === 1) writes++; return original.call(this, fd, ...rest); };
      }
      const stdoutWrite = process.stdout.write.bind(process.stdout);
      process.stdout.write = (...args) => { writes++; return stdoutWrite(...args); };
      const { createLogger } = await import(${JSON.stringify(new URL('../../src/container.ts', import.meta.url).href)});
      const logger = createLogger({ logLevel: 'info', logFormat: 'json' });
      for (let i = 0; i < 60; i++) {
        logger.info({ method: 'GET', url: '/v1/messages', statusCode: 200, ms: 1, n: i }, 'request');
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      process.stderr.write('writes ' + writes + '\\n');
      process.exit(0);
    `;
    const { execFile } = await import('node:child_process');
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) =>
      execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { maxBuffer: 16 * 1024 * 1024 }, (error, out, err) =>
        error ? reject(Object.assign(error, { stderr: err })) : resolve({ stdout: out, stderr: err }),
      ),
    );
    const lines = stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { n: number });
    expect(lines.map((line) => line.n)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    // pino's own destination wrote about one write per line here (each line's write done before the next line).
    const writes = Number(/writes (\d+)/.exec(stderr)?.[1]);
    expect(writes).toBeGreaterThan(0);
    expect(writes).toBeLessThan(10);
  });
});

describe('GatheredLines', () => {
  function recording() {
    const writes: string[] = [];
    const out = { write: (text: string) => void writes.push(text), flush: (callback?: () => void) => callback?.(), flushSync: () => undefined };
    return { writes, out };
  }

  it('hands its lines on as one string, in order, once minLength characters are pending', () => {
    const { writes, out } = recording();
    const lines = new GatheredLines(out, 30, 60_000);
    lines.write('{"n":1}\n');
    lines.write('{"n":2}\n');
    lines.write('{"n":3}\n');
    expect(writes).toEqual([]);
    lines.write('{"n":4}\n');
    expect(writes).toEqual(['{"n":1}\n{"n":2}\n{"n":3}\n{"n":4}\n']);
    lines.write('{"n":5}\n');
    lines.flushSync();
    expect(writes).toEqual(['{"n":1}\n{"n":2}\n{"n":3}\n{"n":4}\n', '{"n":5}\n']);
    lines.flushSync();
    expect(writes).toHaveLength(2);
  });

  it('hands on what is pending every period, and on flush', () => {
    vi.useFakeTimers();
    try {
      const { writes, out } = recording();
      const lines = new GatheredLines(out, 8_192, 50);
      lines.write('a\n');
      vi.advanceTimersByTime(49);
      expect(writes).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(writes).toEqual(['a\n']);
      lines.write('b\n');
      const flushed = vi.fn();
      lines.flush(flushed);
      expect(writes).toEqual(['a\n', 'b\n']);
      expect(flushed).toHaveBeenCalledOnce();
    } finally {
      vi.useRealTimers();
    }
  });
});
