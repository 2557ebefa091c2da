import { describe, expect, it } from 'vitest';
import { ReaderPool } from '../../src/readers/reader-pool.js';

/**
 * A reader thread that stops answering (src/readers/reader-pool.ts): its pages go to the main thread (answered
 * `undefined`) once the oldest has waited `answerTimeoutMs`, a new thread takes its place, and closing the pool does not
 * wait on the hung one. The thread here spins forever on its first message, so nothing about it depends on the database.
 */
const input = { caller: { kind: 'apiKey' as const, environmentId: 'env', organizationId: '', actorId: '' }, page: 0, limit: 10 };

describe('a hung reader thread', () => {
  it('has its pages read on the main thread after the timeout, is replaced, and does not hold up close', async () => {
    const warnings: string[] = [];
    const pool = new ReaderPool({
      file: '/nonexistent/herald.sqlite',
      threads: 1,
      clock: { now: () => Date.now() },
      answerTimeoutMs: 300,
      threadModule: new URL('./never-answers-thread.mjs', import.meta.url),
      logger: { warn: (_fields: unknown, message?: string) => void warnings.push(String(message)) },
    });
    const [first] = pool.threadIds();
    expect(first).toBeDefined();

    const asked = performance.now();
    const pages = await Promise.all([pool.messagePage(input), pool.notificationPage(input)]);
    const waited = performance.now() - asked;
    expect(pages).toEqual([undefined, undefined]);
    expect(waited).toBeGreaterThanOrEqual(290);
    expect(waited).toBeLessThan(5000);
    expect(warnings).toEqual(['reader thread did not answer in time; replacing it']);
    const [second] = pool.threadIds();
    expect(second).toBeDefined();
    expect(second).not.toBe(first);

    // The replacement hangs too (same module): its page goes the same way, and another replaces it.
    expect(await pool.messagePage(input)).toBeUndefined();
    expect(pool.threadIds()[0]).not.toBe(second);

    // The current thread spins on 'stop' as well: close terminates it after the timeout instead of waiting for ever.
    const closing = performance.now();
    await pool.close();
    expect(performance.now() - closing).toBeLessThan(5000);
    expect(await pool.messagePage(input)).toBeUndefined();
  }, 20_000);
});
