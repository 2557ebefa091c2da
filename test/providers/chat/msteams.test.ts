import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { msteamsProvider } from '../../../src/providers/chat/msteams.js';
import { startHttpFake, type HttpFake } from '../../fakes/http-fake.js';
import { testProviderContext } from '../../fakes/provider-context.js';

describe('msteams (incoming webhook)', () => {
  let fake: HttpFake;
  const ctx = testProviderContext();

  beforeEach(async () => {
    fake = await startHttpFake(() => ({ status: 200, body: '1' }));
  });
  afterEach(async () => {
    await fake.close();
  });

  it('wraps plain text in a MessageCard', async () => {
    await msteamsProvider.send({ webhookUrl: `${fake.url}/webhookb2/x` }, { content: 'Disk almost full' }, ctx);
    const [request] = fake.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/webhookb2/x' });
    expect(JSON.parse(request.body)).toEqual({
      '@type': 'MessageCard',
      '@context': 'https://schema.org/extensions',
      summary: 'Disk almost full',
      text: 'Disk almost full',
    });
  });

  it('posts JSON content (an Adaptive Card message) as is', async () => {
    const card = { type: 'message', attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', content: { type: 'AdaptiveCard' } }] };
    await msteamsProvider.send({}, { webhookUrl: `${fake.url}/flow`, content: JSON.stringify(card) }, ctx);
    expect(JSON.parse(fake.requests[0].body)).toEqual(card);
  });
});
