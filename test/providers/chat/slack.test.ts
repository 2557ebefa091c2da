import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { slackProvider } from '../../../src/providers/chat/slack.js';
import { createProviderContext } from '../../../src/providers/outbound.js';
import { startHttpFake, type HttpFake } from '../../fakes/http-fake.js';
import { testProviderContext } from '../../fakes/provider-context.js';
import { providerFailure } from '../../fakes/provider-errors.js';

describe('slack (incoming webhook)', () => {
  let fake: HttpFake;
  const ctx = testProviderContext();

  beforeEach(async () => {
    fake = await startHttpFake(() => ({ status: 200, body: 'ok' }));
  });
  afterEach(async () => {
    await fake.close();
  });

  it("POSTs {text} to the subscriber's webhook URL over the integration's", async () => {
    const result = await slackProvider.send(
      { webhookUrl: `${fake.url}/integration-hook` },
      { webhookUrl: `${fake.url}/services/T0/B0/xyz`, content: 'Deploy finished', overrides: { unfurl_links: false } },
      ctx,
    );
    expect(result.raw).toBe('ok');
    const [request] = fake.requests;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/services/T0/B0/xyz');
    expect(request.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request.body)).toEqual({ text: 'Deploy finished', unfurl_links: false });
  });

  it("falls back to the integration's webhook URL", async () => {
    await slackProvider.send({ webhookUrl: `${fake.url}/integration-hook` }, { content: 'hi' }, ctx);
    expect(fake.requests[0].path).toBe('/integration-hook');
  });

  it('without any webhook URL fails without retry', async () => {
    const error = await providerFailure(slackProvider.send({}, { content: 'hi' }, ctx));
    expect(error.retryable).toBe(false);
  });

  it('maps Slack answers: 500 retryable, 404 no_service not', async () => {
    fake.setHandler(() => ({ status: 500, body: 'internal' }));
    const hook = { webhookUrl: `${fake.url}/h` };
    expect((await providerFailure(slackProvider.send(hook, { content: 'x' }, ctx))).retryable).toBe(true);
    fake.setHandler(() => ({ status: 404, body: 'no_service' }));
    const gone = await providerFailure(slackProvider.send(hook, { content: 'x' }, ctx));
    expect(gone).toMatchObject({ retryable: false, raw: 'no_service', statusCode: 404 });
  });

  it.each(['http://169.254.169.254/latest/meta-data', 'http://10.0.0.1/hook'])(
    'refuses a subscriber webhook at %s',
    async (webhookUrl) => {
      const production = createProviderContext({ timeoutMs: 500, userAgent: 'Herald', allow: [] });
      const error = await providerFailure(slackProvider.send({}, { webhookUrl, content: 'x' }, production));
      expect(error.retryable).toBe(false);
      expect(error.message).toMatch(/refused: (link-local|private) address$/);
    },
  );
});
