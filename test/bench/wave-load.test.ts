import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { waveClient } from '../../bench/lib/wave-load.js';

/** A server that answers each request after `delayMs`, recording how many were open at once and what it saw. */
async function recordingServer(delayMs: number, status = (path: string) => (path.includes('bad') ? 404 : 200)) {
  const seen: Array<{ method: string; path: string; body: string; inFlight: number }> = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const sockets = new Set<unknown>();
  const server: Server = createServer((request, response) => {
    sockets.add(request.socket);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      seen.push({ method: request.method!, path: request.url!, body, inFlight });
      setTimeout(() => {
        inFlight--;
        response.writeHead(status(request.url!), { 'content-type': 'application/json' });
        response.end('{}');
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, seen, server, sockets, maxInFlight: () => maxInFlight };
}

describe('waveClient', () => {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0)) await step();
  });

  it('sends whole waves: every request of a wave is open at once, the next wave only after all have answered', async () => {
    const target = await recordingServer(20);
    cleanup.push(() => new Promise((resolve) => target.server.close(() => resolve())));
    const client = waveClient(target.origin, { 'content-type': 'application/json' }, 8);
    cleanup.push(() => client.close());
    const result = await client.run({ waves: 3, request: (n) => ({ method: 'POST', path: `/item/${n}`, body: JSON.stringify({ n }) }) });
    expect(result).toMatchObject({ ok: 24, notOk: 0, waves: 3, statusCounts: { 200: 24 } });
    expect(target.maxInFlight()).toBe(8);
    expect(target.seen.map((r) => r.path).sort()).toEqual(Array.from({ length: 24 }, (_, n) => `/item/${n}`).sort());
    expect(target.seen.every((r) => r.method === 'POST' && JSON.parse(r.body).n === Number(r.path.split('/')[2]))).toBe(true);
    // The waves do not overlap: the k-th wave's requests arrive after the (k-1)-th's were answered.
    const waveOf = (path: string) => Math.floor(Number(path.split('/')[2]) / 8);
    const arrivalWaves = target.seen.map((r) => waveOf(r.path));
    expect(arrivalWaves).toEqual([...arrivalWaves].sort((a, b) => a - b));
    // The connections are kept across runs.
    await client.run({ waves: 2, request: () => ({ method: 'GET', path: '/again' }) });
    expect(target.sockets.size).toBe(8);
  });

  it('counts answers that are not 2xx apart, and stops on time when given seconds', async () => {
    const target = await recordingServer(5);
    cleanup.push(() => new Promise((resolve) => target.server.close(() => resolve())));
    const client = waveClient(target.origin, {}, 4);
    cleanup.push(() => client.close());
    const result = await client.run({ seconds: 0.2, request: (n) => ({ method: 'GET', path: n % 2 ? '/bad' : '/good' }) });
    expect(result.waves).toBeGreaterThan(1);
    expect(result.ok).toBe(result.waves * 2);
    expect(result.notOk).toBe(result.waves * 2);
    expect(result.statusCounts).toEqual({ 200: result.waves * 2, 404: result.waves * 2 });
    expect(result.elapsedMs).toBeGreaterThanOrEqual(200);
  });

  it('refuses a run with no end', async () => {
    const client = waveClient('http://127.0.0.1:9', {}, 1);
    cleanup.push(() => client.close());
    await expect(client.run({ request: () => ({ method: 'GET', path: '/' }) })).rejects.toThrow('waves or seconds');
  });
});
