import type { LookupFunction } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  assertOutboundAllowed,
  blockedAddressReason,
  createGuardedLookup,
  createOutboundFetch,
  providerErrorFromResponse,
} from '../../src/providers/outbound.js';
import { ProviderError } from '../../src/providers/ports.js';
import { startHttpFake, unusedPort, type HttpFake } from '../fakes/http-fake.js';

async function caught(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe('blockedAddressReason', () => {
  it.each([
    ['10.0.0.1', 'private address'],
    ['172.16.5.4', 'private address'],
    ['172.31.255.255', 'private address'],
    ['192.168.1.1', 'private address'],
    ['127.0.0.1', 'loopback address'],
    ['::1', 'loopback address'],
    ['169.254.169.254', 'link-local address'],
    ['fe80::1', 'link-local address'],
    ['fd12:3456::1', 'unique-local address'],
    ['0.0.0.0', 'unspecified address'],
    ['100.64.0.1', 'shared (CGNAT) address'],
    ['::ffff:10.0.0.1', 'private address'],
  ])('refuses %s as %s', (address, reason) => {
    expect(blockedAddressReason(address)).toBe(reason);
  });

  it.each(['8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111'])('lets public %s through', (address) => {
    expect(blockedAddressReason(address)).toBeUndefined();
  });
});

describe('assertOutboundAllowed', () => {
  it('refuses a host name resolving to the metadata address, naming both', async () => {
    const lookup = async () => ['93.184.216.34', '169.254.169.254'];
    const error = await caught(assertOutboundAllowed('https://metadata.example/x', [], lookup));
    expect(error.message).toBe('Outbound request to metadata.example (169.254.169.254) refused: link-local address');
    expect(error.retryable).toBe(false);
  });

  it('accepts internal targets named by host, host:port, IP or CIDR', async () => {
    const lookup = async () => ['10.1.2.3'];
    await assertOutboundAllowed('http://relay.internal/', ['relay.internal'], lookup);
    await assertOutboundAllowed('smtp://relay.internal:2525', ['relay.internal:2525'], lookup);
    await assertOutboundAllowed('http://relay.internal/', ['10.1.2.3'], lookup);
    await assertOutboundAllowed('http://relay.internal/', ['10.0.0.0/8'], lookup);
    await caught(assertOutboundAllowed('smtp://relay.internal:25', ['relay.internal:2525'], lookup));
    await caught(assertOutboundAllowed('http://relay.internal/', ['192.168.0.0/16'], lookup));
  });

  it('turns a DNS failure into a retryable error', async () => {
    const lookup = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    const error = await caught(assertOutboundAllowed('https://nowhere.example/', [], lookup));
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('ENOTFOUND');
  });
});

describe('createOutboundFetch', () => {
  let fake: HttpFake;
  beforeEach(async () => {
    fake = await startHttpFake(() => ({ status: 200, body: 'ok' }));
  });
  afterEach(async () => {
    await fake.close();
  });

  it.each(['http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/hook'])(
    'refuses %s without making a request',
    async (url) => {
      const spy = vi.fn<typeof fetch>();
      const guarded = createOutboundFetch({ timeoutMs: 1000, userAgent: 'UA', allow: [], fetchImpl: spy });
      const error = await caught(guarded(url, { method: 'POST', body: '{}' }));
      expect(error.retryable).toBe(false);
      expect(error.message).toMatch(/^Outbound request to (169\.254\.169\.254|10\.0\.0\.1) refused: /);
      expect(spy).not.toHaveBeenCalled();
    },
  );

  it('refuses 127.0.0.1 unless it is allowed, then sends with a User-Agent', async () => {
    const closed = createOutboundFetch({ timeoutMs: 1000, userAgent: 'Herald/1.0', allow: [] });
    const error = await caught(closed(`${fake.url}/hook`));
    expect(error.message).toBe('Outbound request to 127.0.0.1 refused: loopback address');
    expect(fake.requests).toHaveLength(0);

    const open = createOutboundFetch({ timeoutMs: 1000, userAgent: 'Herald/1.0', allow: ['127.0.0.1'] });
    const response = await open(`${fake.url}/hook`, { headers: { 'x-extra': '1' } });
    expect(await response.text()).toBe('ok');
    expect(fake.requests[0].headers['user-agent']).toBe('Herald/1.0');
    expect(fake.requests[0].headers['x-extra']).toBe('1');
  });

  it('refuses schemes other than http and https', async () => {
    const guarded = createOutboundFetch({ timeoutMs: 1000, userAgent: 'UA', allow: ['127.0.0.1'] });
    const error = await caught(guarded('file:///etc/passwd'));
    expect(error.retryable).toBe(false);
  });

  it('times out a silent server as a retryable error', async () => {
    fake.setHandler(() => 'hang');
    const guarded = createOutboundFetch({ timeoutMs: 150, userAgent: 'UA', allow: ['127.0.0.1'] });
    const error = await caught(guarded(`${fake.url}/slow`));
    expect(error.retryable).toBe(true);
    expect(error.message).toBe(`Request to ${fake.url}/slow timed out after 150 ms`);
  });

  it('maps a refused connection to a retryable error', async () => {
    const port = await unusedPort();
    const guarded = createOutboundFetch({ timeoutMs: 1000, userAgent: 'UA', allow: ['127.0.0.1'] });
    const error = await caught(guarded(`http://127.0.0.1:${port}/`));
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('ECONNREFUSED');
  });
});

describe('providerErrorFromResponse', () => {
  it.each([
    [500, true],
    [503, true],
    [429, true],
    [400, false],
    [401, false],
    [404, false],
  ])('status %i → retryable %s, raw body kept', async (status, retryable) => {
    const error = await providerErrorFromResponse(new Response('{"error":"x"}', { status }), 'Vendor');
    expect(error.retryable).toBe(retryable);
    expect(error.statusCode).toBe(status);
    expect(error.raw).toBe('{"error":"x"}');
    expect(error.message).toBe(`Vendor answered ${status}: {"error":"x"}`);
  });
});

describe('DNS rebinding', () => {
  it('refuses a name that resolved to a public address for the check and to an internal one when connecting', async () => {
    const fake = await startHttpFake(() => ({ status: 200, body: 'internal' }));
    try {
      let lookups = 0;
      // First answer (the check before the request): public. Second (the connection's own lookup): loopback.
      const lookup = async () => (++lookups === 1 ? ['93.184.216.34'] : ['127.0.0.1']);
      const guarded = createOutboundFetch({ timeoutMs: 1000, userAgent: 'UA', allow: [], lookup });
      const error = await caught(guarded(`http://rebind.example:${fake.port}/secret`));
      expect(lookups).toBe(2);
      expect(error.retryable).toBe(false);
      expect(error.message).toBe('Outbound request to rebind.example (127.0.0.1) refused: loopback address');
      expect(fake.requests).toHaveLength(0);
    } finally {
      await fake.close();
    }
  });

  it('connects to the checked address of an allowed internal host', async () => {
    const fake = await startHttpFake(() => ({ status: 200, body: 'relay' }));
    try {
      const lookup = async () => ['127.0.0.1'];
      const guarded = createOutboundFetch({ timeoutMs: 1000, userAgent: 'UA', allow: [`relay.internal:${fake.port}`], lookup });
      expect(await (await guarded(`http://relay.internal:${fake.port}/hook`)).text()).toBe('relay');
    } finally {
      await fake.close();
    }
  });
});

describe('createGuardedLookup', () => {
  /** Calls a net-style lookup and returns what it answered (or the error it gave). */
  const answer = (lookup: LookupFunction, host: string, options: { family?: number; all?: boolean } = {}) =>
    new Promise<{ error: unknown; address: unknown; family?: number }>((resolve) =>
      lookup(host, options, (error, address, family) => resolve({ error, address, family })),
    );

  it('answers one address or all of them, of the family asked for', async () => {
    const guarded = createGuardedLookup([], async () => ['2606:4700::1111', '93.184.216.34']);
    expect(await answer(guarded, 'vendor.example')).toEqual({ error: null, address: '2606:4700::1111', family: 6 });
    expect(await answer(guarded, 'vendor.example', { family: 4 })).toEqual({ error: null, address: '93.184.216.34', family: 4 });
    expect(await answer(guarded, 'vendor.example', { all: true })).toMatchObject({
      error: null,
      address: [
        { address: '2606:4700::1111', family: 6 },
        { address: '93.184.216.34', family: 4 },
      ],
    });
  });

  it('refuses a name with an internal address unless the host or the address is allowed', async () => {
    const lookup = async () => ['93.184.216.34', '10.1.2.3'];
    const refused = await answer(createGuardedLookup([], lookup), 'Relay.Internal', { all: true });
    expect(refused.error).toBeInstanceOf(ProviderError);
    expect(refused.error).toMatchObject({ retryable: false, message: 'Outbound request to relay.internal (10.1.2.3) refused: private address' });
    for (const allow of [['relay.internal'], ['relay.internal:2525'], ['10.1.2.3'], ['10.0.0.0/8']]) {
      expect((await answer(createGuardedLookup(allow, lookup), 'relay.internal', { family: 4 })).error).toBeNull();
    }
    expect((await answer(createGuardedLookup(['192.168.0.0/16'], lookup), 'relay.internal')).error).toBeInstanceOf(ProviderError);
  });
});
