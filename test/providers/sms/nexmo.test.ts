import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nexmoProvider } from '../../../src/providers/sms/nexmo.js';
import { startHttpFake, type HttpFake } from '../../fakes/http-fake.js';
import { testProviderContext } from '../../fakes/provider-context.js';
import { providerFailure } from '../../fakes/provider-errors.js';

describe('nexmo (Vonage SMS API)', () => {
  let fake: HttpFake;
  const ctx = testProviderContext();
  const credentials = () => ({ apiKey: 'vk', secretKey: 'vs', from: 'Herald', baseUrl: fake.url });
  const accepted = { 'message-count': '1', messages: [{ to: '447700900000', 'message-id': 'vm-1', status: '0' }] };

  beforeEach(async () => {
    fake = await startHttpFake(() => ({ status: 200, body: accepted }));
  });
  afterEach(async () => {
    await fake.close();
  });

  it('POSTs a form with key and secret to /sms/json', async () => {
    const result = await nexmoProvider.send(credentials(), { to: '+447700900000', content: 'Hi there' }, ctx);
    expect(result.id).toBe('vm-1');
    const [request] = fake.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/sms/json' });
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({
      api_key: 'vk',
      api_secret: 'vs',
      from: 'Herald',
      to: '447700900000',
      text: 'Hi there',
    });
  });

  it('reads a refusal out of a 200 answer: throttled is retryable, bad credentials not', async () => {
    fake.setHandler(() => ({ status: 200, body: { messages: [{ status: '1', 'error-text': 'Throughput Rate Exceeded' }] } }));
    const throttled = await providerFailure(nexmoProvider.send(credentials(), { to: '1', content: 'x' }, ctx));
    expect(throttled).toMatchObject({ retryable: true, message: 'Vonage refused the message (status 1): Throughput Rate Exceeded' });
    fake.setHandler(() => ({ status: 200, body: { messages: [{ status: '4', 'error-text': 'Bad Credentials' }] } }));
    expect((await providerFailure(nexmoProvider.send(credentials(), { to: '1', content: 'x' }, ctx))).retryable).toBe(false);
  });

  it('check() GETs /account/get-balance', async () => {
    fake.setHandler(() => ({ status: 200, body: { value: 10.5 } }));
    await nexmoProvider.check!(credentials(), ctx);
    expect(fake.requests[0]).toMatchObject({ method: 'GET', path: '/account/get-balance?api_key=vk&api_secret=vs' });
  });
});
