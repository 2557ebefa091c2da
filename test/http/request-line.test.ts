import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { createLogger } from '../../src/container.js';
import { pathOf, requestLineWriter } from '../../src/http/request-line.js';

function capture(): { stream: Writable; written: string[] } {
  const written: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      written.push(String(chunk));
      done();
    },
  });
  return { stream, written };
}

/** Fastify's own logger over `logger` (app.log: what app.ts builds the writer from and request.log is a child of). */
async function appLogOf(logger: FastifyBaseLogger | pino.Logger): Promise<FastifyBaseLogger> {
  const app = Fastify({ loggerInstance: logger as FastifyBaseLogger });
  await app.ready();
  await app.close();
  return app.log;
}

describe('requestLineWriter', () => {
  afterEach(() => vi.restoreAllMocks());

  it("writes the bytes pino's request child writes for the request line, with Herald's logger and its redaction paths", async () => {
    vi.spyOn(Date, 'now').mockReturnValue(1_795_000_000_123);
    const { stream, written } = capture();
    const appLog = await appLogOf(createLogger({ logLevel: 'info', logFormat: 'json' }, stream) as unknown as pino.Logger);
    const write = requestLineWriter(appLog);
    expect(write).toBeDefined();
    const cases: Array<[string, string, string, number, number]> = [
      ['req-1', 'GET', '/v1/messages', 200, 3],
      ['req-2a', 'POST', '/v1/events/trigger', 201, 0],
      ['req-3', 'DELETE', '/v1/subscribers/a"b\\c', 404, 12],
      ['req-4', 'GET', '/v1/subscribers/\u00e9t\u00e9-\u{1F600}\u0001', 429, 1234],
    ];
    for (const [reqId, method, url, statusCode, ms] of cases) {
      const start = written.length;
      write!(reqId, method, url, statusCode, ms);
      appLog.child({ reqId }).info({ method, url, statusCode, ms }, 'request');
      const [fast, viaPino] = written.slice(start);
      expect(fast).toBe(viaPino);
    }
    expect(JSON.parse(written[0]!)).toEqual({ level: 30, time: 1_795_000_000_123, pid: process.pid, hostname: expect.any(String), reqId: 'req-1', method: 'GET', url: '/v1/messages', statusCode: 200, ms: 3, msg: 'request' });
  });

  it('writes nothing below the logger level, and follows a level changed later', async () => {
    const { stream, written } = capture();
    const appLog = await appLogOf(pino({ level: 'warn' }, stream));
    const write = requestLineWriter(appLog)!;
    write('req-1', 'GET', '/health', 200, 1);
    expect(written).toHaveLength(0);
    appLog.level = 'info';
    write('req-2', 'GET', '/health', 200, 1);
    expect(written).toHaveLength(1);
  });

  it('leaves the line to pino where it cannot match its bytes', async () => {
    const { stream } = capture();
    expect(requestLineWriter(await appLogOf(pino({ mixin: () => ({ extra: 1 }) }, stream)))).toBeUndefined();
    expect(requestLineWriter(await appLogOf(pino({ redact: ['url'] }, stream)))).toBeUndefined();
    expect(requestLineWriter(await appLogOf(pino({ formatters: { log: (entry) => entry } }, stream)))).toBeUndefined();
    expect(requestLineWriter(await appLogOf(pino({ nestedKey: 'payload' }, stream)))).toBeUndefined();
    expect(requestLineWriter(await appLogOf(pino({ serializers: { url: (url: string) => url.toUpperCase() } }, stream)))).toBeUndefined();
    expect(requestLineWriter(await appLogOf(pino({}, pino.multistream([{ stream }]))))).toBeUndefined();
    expect(requestLineWriter({ info: () => undefined })).toBeUndefined();
    expect(requestLineWriter(Fastify({ logger: false }).log)).toBeUndefined();
  });
});

describe('pathOf', () => {
  it('cuts the query', () => {
    expect(pathOf('/v1/messages?limit=10&page=1')).toBe('/v1/messages');
    expect(pathOf('/v1/messages')).toBe('/v1/messages');
    expect(pathOf('/?')).toBe('/');
  });
});
