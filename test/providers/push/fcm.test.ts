import { generateKeyPairSync } from 'node:crypto';
import { jwtVerify, importSPKI, decodeProtectedHeader } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fcmProvider } from '../../../src/providers/push/fcm.js';
import { startHttpFake, type HttpFake, type RecordedRequest } from '../../fakes/http-fake.js';
import { testProviderContext } from '../../fakes/provider-context.js';
import { providerFailure } from '../../fakes/provider-errors.js';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();

const UNREGISTERED = {
  error: {
    code: 404,
    message: 'Requested entity was not found.',
    status: 'NOT_FOUND',
    details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'UNREGISTERED' }],
  },
};

describe('fcm (HTTP v1)', () => {
  let fake: HttpFake;
  const ctx = testProviderContext();
  let sendStatus: (token: string) => { status: number; body: unknown };

  const credentials = () => ({
    baseUrl: fake.url,
    serviceAccount: JSON.stringify({
      type: 'service_account',
      project_id: 'herald-demo',
      private_key_id: 'key-1',
      // As pasted into a JSON form: literal "\n" sequences.
      private_key: privatePem.replace(/\n/g, '\\n'),
      client_email: `sender-${fake.port}@herald-demo.iam.gserviceaccount.com`,
      token_uri: `${fake.url}/token`,
    }),
  });
  const message = { target: ['tok-live', 'tok-dead'], title: 'Hello', content: 'World', payload: { orderId: 42, kind: 'x' } };

  const handler = (request: RecordedRequest) => {
    if (request.path === '/token') return { status: 200, body: { access_token: 'ya29.token', expires_in: 3599, token_type: 'Bearer' } };
    const token = JSON.parse(request.body).message.token as string;
    return sendStatus(token);
  };

  beforeEach(async () => {
    sendStatus = (token) =>
      token === 'tok-dead' ? { status: 404, body: UNREGISTERED } : { status: 200, body: { name: `projects/herald-demo/messages/${token}` } };
    fake = await startHttpFake(handler);
  });
  afterEach(async () => {
    await fake.close();
  });

  it('exchanges a signed JWT for a token, then POSTs messages:send per token', async () => {
    const result = await fcmProvider.send(credentials(), message, ctx);

    const tokenRequest = fake.requests[0];
    expect(tokenRequest).toMatchObject({ method: 'POST', path: '/token' });
    expect(tokenRequest.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(tokenRequest.body);
    expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    const assertion = form.get('assertion')!;
    expect(decodeProtectedHeader(assertion)).toMatchObject({ alg: 'RS256', kid: 'key-1' });
    const { payload } = await jwtVerify(assertion, await importSPKI(publicPem, 'RS256'), {
      issuer: `sender-${fake.port}@herald-demo.iam.gserviceaccount.com`,
      audience: `${fake.url}/token`,
    });
    expect(payload.scope).toBe('https://www.googleapis.com/auth/firebase.messaging');
    expect(payload.exp! - payload.iat!).toBe(3600);

    const sends = fake.requests.slice(1);
    expect(sends).toHaveLength(2);
    for (const send of sends) {
      expect(send.method).toBe('POST');
      expect(send.path).toBe('/v1/projects/herald-demo/messages:send');
      expect(send.headers.authorization).toBe('Bearer ya29.token');
    }
    expect(JSON.parse(sends.find((s) => s.body.includes('tok-live'))!.body)).toEqual({
      message: { token: 'tok-live', notification: { title: 'Hello', body: 'World' }, data: { orderId: '42', kind: 'x' } },
    });
    expect(result.id).toBe('projects/herald-demo/messages/tok-live');
    expect(result.tokenResults).toEqual([
      { token: 'tok-live', ok: true },
      expect.objectContaining({ token: 'tok-dead', ok: false, invalid: true }),
    ]);
  });

  it('reuses the access token until it expires', async () => {
    await fcmProvider.send(credentials(), { ...message, target: ['tok-live'] }, ctx);
    await fcmProvider.send(credentials(), { ...message, target: ['tok-live'] }, ctx);
    expect(fake.requests.map((r) => r.path)).toEqual([
      '/token',
      '/v1/projects/herald-demo/messages:send',
      '/v1/projects/herald-demo/messages:send',
    ]);
  });

  it('marks INVALID_ARGUMENT about the registration token as invalid', async () => {
    sendStatus = () => ({
      status: 400,
      body: { error: { code: 400, status: 'INVALID_ARGUMENT', message: 'The registration token is not a valid FCM registration token' } },
    });
    const result = await fcmProvider.send(credentials(), { ...message, target: ['garbage'] }, ctx);
    expect(result.tokenResults).toEqual([expect.objectContaining({ token: 'garbage', ok: false, invalid: true })]);
  });

  it('throws a retryable error when every token hit a 500, non-retryable on a refused token exchange', async () => {
    sendStatus = () => ({ status: 500, body: { error: { status: 'INTERNAL' } } });
    const down = await providerFailure(fcmProvider.send(credentials(), message, ctx));
    expect(down.retryable).toBe(true);

    fake.setHandler(() => ({ status: 400, body: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' } }));
    const refused = await providerFailure(fcmProvider.check!(credentials(), ctx));
    expect(refused).toMatchObject({ retryable: false, statusCode: 400 });
    expect(refused.raw).toContain('invalid_grant');
  });

  it('rejects a serviceAccount that is not service-account JSON', async () => {
    const error = await providerFailure(fcmProvider.send({ serviceAccount: '{"project_id":"x"}' }, message, ctx));
    expect(error.message).toContain('missing client_email, private_key');
  });
});
