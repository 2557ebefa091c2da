import { generateKeyPairSync } from 'node:crypto';
import { decodeProtectedHeader, importSPKI, jwtVerify } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createProviderContext } from '../../../src/providers/outbound.js';
import { apnsProvider } from '../../../src/providers/push/apns.js';
import { unusedPort } from '../../fakes/http-fake.js';
import { startHttp2Fake, type Http2Fake } from '../../fakes/http2-fake.js';
import { testProviderContext } from '../../fakes/provider-context.js';
import { providerFailure } from '../../fakes/provider-errors.js';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const p8 = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();

describe('apns (HTTP/2)', () => {
  let fake: Http2Fake;
  const ctx = testProviderContext(500);
  const credentials = () => ({ secretKey: p8, apiKey: 'KEY123', projectName: 'TEAM456', applicationId: 'com.herald.app', baseUrl: fake.url });
  const message = { target: ['aaaa', 'bbbb', 'cccc'], title: 'Order shipped', content: 'On its way', payload: { orderId: 'o1' } };

  beforeEach(async () => {
    fake = await startHttp2Fake(({ headers }) => {
      const token = String(headers[':path']).split('/').pop();
      if (token === 'bbbb') return { status: 410, body: { reason: 'Unregistered', timestamp: 1700000000000 } };
      if (token === 'cccc') return { status: 400, body: { reason: 'BadDeviceToken' } };
      return { status: 200, headers: { 'apns-id': 'apns-uuid-1' } };
    });
  });
  afterEach(async () => {
    await fake.close();
  });

  it('POSTs /3/device/{token} with an ES256 provider token, topic and alert body', async () => {
    const result = await apnsProvider.send(credentials(), message, ctx);
    expect(result.id).toBe('apns-uuid-1');
    expect(result.tokenResults).toEqual([
      { token: 'aaaa', ok: true },
      expect.objectContaining({ token: 'bbbb', ok: false, invalid: true }),
      expect.objectContaining({ token: 'cccc', ok: false, invalid: true }),
    ]);
    const first = fake.requests.find((r) => r.headers[':path'] === '/3/device/aaaa')!;
    expect(first.headers[':method']).toBe('POST');
    expect(first.headers['apns-topic']).toBe('com.herald.app');
    expect(first.headers['apns-push-type']).toBe('alert');
    const jwt = String(first.headers.authorization).replace(/^bearer /, '');
    expect(decodeProtectedHeader(jwt)).toEqual({ alg: 'ES256', kid: 'KEY123' });
    const { payload } = await jwtVerify(jwt, await importSPKI(publicPem, 'ES256'), { issuer: 'TEAM456' });
    expect(typeof payload.iat).toBe('number');
    expect(JSON.parse(first.body)).toEqual({ orderId: 'o1', aps: { alert: { title: 'Order shipped', body: 'On its way' } } });
  });

  it('throws when the provider token is refused for every device', async () => {
    fake.setHandler(() => ({ status: 403, body: { reason: 'InvalidProviderToken' } }));
    const error = await providerFailure(apnsProvider.send(credentials(), { ...message, target: ['aaaa'] }, ctx));
    expect(error).toMatchObject({ retryable: false, statusCode: 403 });
  });

  it('a stream that never answers times out as retryable', async () => {
    fake.setHandler(() => 'hang');
    const error = await providerFailure(apnsProvider.send(credentials(), { ...message, target: ['aaaa'] }, ctx));
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('timed out after 500 ms');
  });

  it('an unreachable host is retryable', async () => {
    const port = await unusedPort();
    const error = await providerFailure(
      apnsProvider.send({ ...credentials(), baseUrl: `http://127.0.0.1:${port}` }, { ...message, target: ['aaaa'] }, ctx),
    );
    expect(error.retryable).toBe(true);
  });

  it('goes through the outbound guard', async () => {
    const closed = createProviderContext({ timeoutMs: 500, userAgent: 'UA', allow: [] });
    const error = await providerFailure(apnsProvider.send(credentials(), message, closed));
    expect(error.message).toBe('Outbound request to 127.0.0.1 refused: loopback address');
    expect(fake.requests).toHaveLength(0);
  });

  it('refuses a name that resolved to a public address for the check and to loopback when connecting (DNS rebinding)', async () => {
    let lookups = 0;
    // First answer (the check before connecting): public. Later ones (the connection's): loopback. "localhost" is a name
    // the system resolver answers with a loopback address, so a second resolution by node:http2 itself would reach the fake.
    const lookup = async () => (++lookups === 1 ? ['93.184.216.34'] : ['127.0.0.1']);
    const rebinding = createProviderContext({ timeoutMs: 500, userAgent: 'UA', allow: [], lookup });
    const port = new URL(fake.url).port;
    const error = await providerFailure(apnsProvider.send({ ...credentials(), baseUrl: `http://localhost:${port}` }, message, rebinding));
    expect(error.retryable).toBe(false);
    expect(error.message).toBe('Outbound request to localhost (127.0.0.1) refused: loopback address');
    expect(lookups).toBe(2);
    expect(fake.requests).toHaveLength(0);
  });

  it('connects an allowed host name to the address its guarded lookup answered', async () => {
    let lookups = 0;
    const lookup = async () => {
      lookups += 1;
      return ['127.0.0.1'];
    };
    const port = new URL(fake.url).port;
    const allowed = createProviderContext({ timeoutMs: 500, userAgent: 'UA', allow: [`push.herald.test:${port}`], lookup });
    const result = await apnsProvider.send({ ...credentials(), baseUrl: `http://push.herald.test:${port}` }, { ...message, target: ['aaaa'] }, allowed);
    expect(result.id).toBe('apns-uuid-1');
    // The check before connecting needs no lookup for a host the allow list names: this one is the connection's.
    expect(lookups).toBe(1);
    expect(fake.requests.map((r) => [r.headers[':path'], r.headers[':authority']])).toEqual([['/3/device/aaaa', `push.herald.test:${port}`]]);
  });

  it('check() signs a token with the key; a non-EC key fails', async () => {
    await apnsProvider.check!(credentials(), ctx);
    const error = await providerFailure(apnsProvider.check!({ ...credentials(), secretKey: 'not a key' }, ctx));
    expect(error.retryable).toBe(false);
  });
});
