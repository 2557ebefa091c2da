import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { api } from '../../bench/lib/bench-client.js';

/** A local server answering 429 (Retry-After: 1) to the first `limited` requests, then 200 with a JSON body. */
async function limitedServer(limited: number): Promise<{ server: Server; url: string; requests: () => number }> {
  let requests = 0;
  const server = createServer((_request, response) => {
    requests++;
    if (requests <= limited) {
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
      response.end(JSON.stringify({ statusCode: 429, message: 'API rate limit exceeded' }));
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ data: [], totalCount: 0 }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests };
}

describe('bench client api()', () => {
  let server: Server | undefined;
  afterEach(async () => void (await new Promise((resolve) => server?.close(resolve))));

  it("waits out a 429 for its Retry-After and answers the retry's body (a bench call right after a timed load)", async () => {
    const limited = await limitedServer(1);
    server = limited.server;
    const started = Date.now();
    const answer = await api(limited.url, 'key', 'GET', '/v1/messages?limit=1');
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ data: [], totalCount: 0 });
    expect(limited.requests()).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('gives up with the 429 as an error after its retries', async () => {
    const limited = await limitedServer(100);
    server = limited.server;
    await expect(api(limited.url, 'key', 'GET', '/v1/messages')).rejects.toThrow(/429 .*API rate limit exceeded/);
    expect(limited.requests()).toBe(6);
  }, 20_000);
});
