import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { genericSmsProvider } from '../../../src/providers/sms/generic-sms.js';
import { startHttpFake, type HttpFake } from '../../fakes/http-fake.js';
import { testProviderContext } from '../../fakes/provider-context.js';
import { providerFailure } from '../../fakes/provider-errors.js';

describe('generic-sms', () => {
  let fake: HttpFake;
  const ctx = testProviderContext();

  beforeEach(async () => {
    fake = await startHttpFake(() => ({ status: 200, body: { result: { messageId: 77, sentAt: '2026-02-01T10:00:00Z' } } }));
  });
  afterEach(async () => {
    await fake.close();
  });

  it('POSTs JSON to baseUrl with the configured key headers and reads id/date at their paths', async () => {
    const credentials = {
      baseUrl: `${fake.url}/api/sms`,
      apiKeyRequestHeader: 'X-Gateway-Key',
      apiKey: 'gk',
      secretKeyRequestHeader: 'X-Gateway-Secret',
      secretKey: 'gs',
      from: 'Herald',
      idPath: 'result.messageId',
      datePath: 'result.sentAt',
    };
    const result = await genericSmsProvider.send(credentials, { to: '+100', content: 'Hi' }, ctx);
    expect(result).toMatchObject({ id: '77', date: '2026-02-01T10:00:00Z' });
    const [request] = fake.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/api/sms' });
    expect(request.headers['x-gateway-key']).toBe('gk');
    expect(request.headers['x-gateway-secret']).toBe('gs');
    expect(JSON.parse(request.body)).toEqual({ to: '+100', content: 'Hi', from: 'Herald' });
  });

  it('maps a 503 to a retryable error', async () => {
    fake.setHandler(() => ({ status: 503, body: 'busy' }));
    const error = await providerFailure(
      genericSmsProvider.send({ baseUrl: fake.url, apiKey: 'k', from: 'H' }, { to: '1', content: 'x' }, ctx),
    );
    expect(error).toMatchObject({ retryable: true, raw: 'busy' });
  });
});
