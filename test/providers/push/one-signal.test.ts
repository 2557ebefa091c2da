import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { oneSignalProvider } from '../../../src/providers/push/one-signal.js';
import { startHttpFake, type HttpFake } from '../../fakes/http-fake.js';
import { testProviderContext } from '../../fakes/provider-context.js';
import { providerFailure } from '../../fakes/provider-errors.js';

describe('one-signal', () => {
  let fake: HttpFake;
  const ctx = testProviderContext();
  const credentials = () => ({ applicationId: 'app-1', apiKey: 'os_key', baseUrl: fake.url });
  const message = { target: ['sub-1', 'sub-2'], title: 'T', content: 'B', payload: { a: 1 } };

  beforeEach(async () => {
    fake = await startHttpFake(() => ({ status: 200, body: { id: 'notif-1', errors: { invalid_player_ids: ['sub-2'] } } }));
  });
  afterEach(async () => {
    await fake.close();
  });

  it('POSTs /notifications?c=push with Key auth and marks invalid subscription ids', async () => {
    const result = await oneSignalProvider.send(credentials(), message, ctx);
    const [request] = fake.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/notifications?c=push' });
    expect(request.headers.authorization).toBe('Key os_key');
    expect(JSON.parse(request.body)).toEqual({
      app_id: 'app-1',
      target_channel: 'push',
      include_subscription_ids: ['sub-1', 'sub-2'],
      headings: { en: 'T' },
      contents: { en: 'B' },
      data: { a: 1 },
    });
    expect(result.id).toBe('notif-1');
    expect(result.tokenResults).toEqual([
      { token: 'sub-1', ok: true },
      expect.objectContaining({ token: 'sub-2', ok: false, invalid: true }),
    ]);
  });

  it('throws when OneSignal created nothing', async () => {
    fake.setHandler(() => ({ status: 200, body: { id: '', errors: ['All included players are not subscribed'] } }));
    const error = await providerFailure(oneSignalProvider.send(credentials(), message, ctx));
    expect(error).toMatchObject({ retryable: false, message: 'OneSignal: All included players are not subscribed' });
  });
});
