import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { plivoProvider } from '../../../src/providers/sms/plivo.js';
import { startHttpFake, type HttpFake } from '../../fakes/http-fake.js';
import { testProviderContext } from '../../fakes/provider-context.js';
import { providerFailure } from '../../fakes/provider-errors.js';

describe('plivo', () => {
  let fake: HttpFake;
  const ctx = testProviderContext();
  const credentials = () => ({ accountSid: 'MAXXX', token: 'pt', from: '+14155550000', baseUrl: fake.url });

  beforeEach(async () => {
    fake = await startHttpFake(() => ({ status: 202, body: { api_id: 'a1', message: 'message(s) queued', message_uuid: ['uuid-1'] } }));
  });
  afterEach(async () => {
    await fake.close();
  });

  it('POSTs JSON {src, dst, text} to /v1/Account/{auth_id}/Message/ with basic auth', async () => {
    const result = await plivoProvider.send(credentials(), { to: '+14155551234', content: 'Hello' }, ctx);
    expect(result.id).toBe('uuid-1');
    const [request] = fake.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/v1/Account/MAXXX/Message/' });
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from('MAXXX:pt').toString('base64')}`);
    expect(request.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request.body)).toEqual({ src: '+14155550000', dst: '+14155551234', text: 'Hello' });
  });

  it('check() GETs the account; 401 is not retryable', async () => {
    await plivoProvider.check!(credentials(), ctx);
    expect(fake.requests[0]).toMatchObject({ method: 'GET', path: '/v1/Account/MAXXX/' });
    fake.setHandler(() => ({ status: 401, body: 'Could not verify your access level for that URL.' }));
    expect((await providerFailure(plivoProvider.check!(credentials(), ctx))).retryable).toBe(false);
  });
});
