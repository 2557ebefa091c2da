import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pushWebhookProvider } from '../../../src/providers/push/push-webhook.js';
import { startHttpFake, type HttpFake } from '../../fakes/http-fake.js';
import { testProviderContext } from '../../fakes/provider-context.js';
import { providerFailure } from '../../fakes/provider-errors.js';

describe('push-webhook', () => {
  let fake: HttpFake;
  const ctx = testProviderContext();
  const message = { target: ['t1', 't2'], title: 'T', content: 'B', payload: { x: true } };

  beforeEach(async () => {
    fake = await startHttpFake(() => ({ status: 200, body: { id: 'hook-1' } }));
  });
  afterEach(async () => {
    await fake.close();
  });

  it('POSTs the push as signed JSON; every token counts as delivered', async () => {
    const result = await pushWebhookProvider.send({ webhookUrl: `${fake.url}/push`, secretKey: 's' }, message, ctx);
    const [request] = fake.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/push' });
    expect(JSON.parse(request.body)).toEqual({ target: ['t1', 't2'], title: 'T', content: 'B', payload: { x: true } });
    expect(request.headers['x-novu-signature']).toBe(createHmac('sha256', 's').update(request.body).digest('hex'));
    expect(result).toMatchObject({ id: 'hook-1', tokenResults: [{ token: 't1', ok: true }, { token: 't2', ok: true }] });
  });

  it('a 502 is a retryable failure of the whole request', async () => {
    fake.setHandler(() => ({ status: 502, body: 'bad gateway' }));
    const error = await providerFailure(pushWebhookProvider.send({ webhookUrl: `${fake.url}/push`, secretKey: 's' }, message, ctx));
    expect(error.retryable).toBe(true);
  });
});
