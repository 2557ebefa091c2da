import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expoProvider } from '../../../src/providers/push/expo.js';
import { startHttpFake, type HttpFake } from '../../fakes/http-fake.js';
import { testProviderContext } from '../../fakes/provider-context.js';
import { providerFailure } from '../../fakes/provider-errors.js';

describe('expo', () => {
  let fake: HttpFake;
  const ctx = testProviderContext();
  const message = { target: ['ExponentPushToken[a]', 'ExponentPushToken[b]'], title: 'T', content: 'B', payload: { n: 1 } };

  beforeEach(async () => {
    fake = await startHttpFake(() => ({
      status: 200,
      body: {
        data: [
          { status: 'ok', id: 'ticket-a' },
          {
            status: 'error',
            message: '"ExponentPushToken[b]" is not a registered push notification recipient',
            details: { error: 'DeviceNotRegistered' },
          },
        ],
      },
    }));
  });
  afterEach(async () => {
    await fake.close();
  });

  it('POSTs the message array to /--/api/v2/push/send and reads one ticket per token', async () => {
    const result = await expoProvider.send({ baseUrl: fake.url, accessToken: 'expo-at' }, message, ctx);
    const [request] = fake.requests;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/--/api/v2/push/send');
    expect(request.headers.authorization).toBe('Bearer expo-at');
    expect(request.headers.accept).toBe('application/json');
    expect(JSON.parse(request.body)).toEqual([
      { to: 'ExponentPushToken[a]', title: 'T', body: 'B', data: { n: 1 } },
      { to: 'ExponentPushToken[b]', title: 'T', body: 'B', data: { n: 1 } },
    ]);
    expect(result.id).toBe('ticket-a');
    expect(result.tokenResults).toEqual([
      { token: 'ExponentPushToken[a]', ok: true },
      {
        token: 'ExponentPushToken[b]',
        ok: false,
        invalid: true,
        error: 'Expo: DeviceNotRegistered: "ExponentPushToken[b]" is not a registered push notification recipient',
      },
    ]);
  });

  it('throws when the whole request fails (500 retryable)', async () => {
    fake.setHandler(() => ({ status: 500, body: { errors: [{ code: 'INTERNAL_SERVER_ERROR' }] } }));
    const error = await providerFailure(expoProvider.send({ baseUrl: fake.url }, message, ctx));
    expect(error.retryable).toBe(true);
    expect(fake.requests[0].headers.authorization).toBeUndefined();
  });

  it('throws when no token got through and none was invalid', async () => {
    fake.setHandler(() => ({
      status: 200,
      body: { data: [{ status: 'error', message: 'bad creds', details: { error: 'InvalidCredentials' } }] },
    }));
    const error = await providerFailure(
      expoProvider.send({ baseUrl: fake.url }, { ...message, target: ['ExponentPushToken[a]'] }, ctx),
    );
    expect(error).toMatchObject({ retryable: false, message: 'Expo: InvalidCredentials: bad creds' });
  });

  it('refuses a subscriber with no device tokens', async () => {
    const error = await providerFailure(expoProvider.send({ baseUrl: fake.url }, { ...message, target: [] }, ctx));
    expect(error.retryable).toBe(false);
    expect(fake.requests).toHaveLength(0);
  });
});
