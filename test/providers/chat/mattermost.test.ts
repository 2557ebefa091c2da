import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mattermostProvider } from '../../../src/providers/chat/mattermost.js';
import { startHttpFake, type HttpFake } from '../../fakes/http-fake.js';
import { testProviderContext } from '../../fakes/provider-context.js';

describe('mattermost (incoming webhook)', () => {
  let fake: HttpFake;
  const ctx = testProviderContext();

  beforeEach(async () => {
    fake = await startHttpFake(() => ({ status: 200, body: 'ok' }));
  });
  afterEach(async () => {
    await fake.close();
  });

  it('POSTs {text, channel}', async () => {
    await mattermostProvider.send({}, { webhookUrl: `${fake.url}/hooks/xyz`, channel: 'town-square', content: 'Hello' }, ctx);
    const [request] = fake.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/hooks/xyz' });
    expect(request.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request.body)).toEqual({ text: 'Hello', channel: 'town-square' });
  });
});
