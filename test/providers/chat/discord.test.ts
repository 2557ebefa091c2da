import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discordProvider } from '../../../src/providers/chat/discord.js';
import { startHttpFake, type HttpFake } from '../../fakes/http-fake.js';
import { testProviderContext } from '../../fakes/provider-context.js';
import { providerFailure } from '../../fakes/provider-errors.js';

describe('discord (webhook)', () => {
  let fake: HttpFake;
  const ctx = testProviderContext();

  beforeEach(async () => {
    fake = await startHttpFake(() => ({ status: 200, body: { id: '112233', content: 'Build green' } }));
  });
  afterEach(async () => {
    await fake.close();
  });

  it('POSTs {content} with wait=true and keeps the message id', async () => {
    const result = await discordProvider.send({}, { webhookUrl: `${fake.url}/api/webhooks/1/abc`, content: 'Build green' }, ctx);
    expect(result.id).toBe('112233');
    const [request] = fake.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/api/webhooks/1/abc?wait=true' });
    expect(JSON.parse(request.body)).toEqual({ content: 'Build green' });
  });

  it('429 is retryable', async () => {
    fake.setHandler(() => ({ status: 429, body: { message: 'You are being rate limited.', retry_after: 1 } }));
    const error = await providerFailure(discordProvider.send({ webhookUrl: `${fake.url}/h` }, { content: 'x' }, ctx));
    expect(error.retryable).toBe(true);
  });
});
