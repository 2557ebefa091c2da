import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chatWebhookProvider } from '../../../src/providers/chat/chat-webhook.js';
import { startHttpFake, type HttpFake } from '../../fakes/http-fake.js';
import { testProviderContext } from '../../fakes/provider-context.js';

describe('chat-webhook', () => {
  let fake: HttpFake;
  const ctx = testProviderContext();

  beforeEach(async () => {
    fake = await startHttpFake(() => ({ status: 200, body: { id: 9 } }));
  });
  afterEach(async () => {
    await fake.close();
  });

  it('POSTs JSON signed with x-novu-signature when a secretKey is set', async () => {
    const result = await chatWebhookProvider.send(
      { webhookUrl: `${fake.url}/chat`, secretKey: 'k' },
      { content: 'Hi', channel: 'ops' },
      ctx,
    );
    expect(result.id).toBe('9');
    const [request] = fake.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/chat' });
    expect(JSON.parse(request.body)).toEqual({ content: 'Hi', channel: 'ops' });
    expect(request.headers['x-novu-signature']).toBe(createHmac('sha256', 'k').update(request.body).digest('hex'));
  });

  it('sends no signature without a secretKey', async () => {
    await chatWebhookProvider.send({ webhookUrl: `${fake.url}/chat` }, { content: 'Hi' }, ctx);
    expect(fake.requests[0].headers['x-novu-signature']).toBeUndefined();
  });
});
