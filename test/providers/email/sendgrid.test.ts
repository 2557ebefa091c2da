import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sendgridProvider } from '../../../src/providers/email/sendgrid.js';
import { ProviderError } from '../../../src/providers/ports.js';
import { startHttpFake, unusedPort, type HttpFake } from '../../fakes/http-fake.js';
import { testProviderContext } from '../../fakes/provider-context.js';

describe('sendgrid', () => {
  let fake: HttpFake;
  const ctx = testProviderContext();
  // Short only where the fake hangs: the calls it answers get the default, as a loaded machine can take 300 ms.
  const hangCtx = testProviderContext(300);
  const credentials = () => ({ apiKey: 'SG.key', from: 'noreply@herald.test', senderName: 'Herald', baseUrl: fake.url });
  const message = {
    to: ['ada@example.com'],
    bcc: ['audit@example.com'],
    subject: 'Hi',
    html: '<p>Hi</p>',
    text: 'Hi',
    replyTo: 'help@herald.test',
    attachments: [{ filename: 'a.txt', content: new TextEncoder().encode('A'), mime: 'text/plain' }],
  };

  beforeEach(async () => {
    fake = await startHttpFake(() => ({ status: 202, headers: { 'x-message-id': 'sg-123' } }));
  });
  afterEach(async () => {
    await fake.close();
  });

  it('POSTs v3 mail/send with a bearer key and the documented body', async () => {
    const result = await sendgridProvider.send(credentials(), message, ctx);
    expect(result.id).toBe('sg-123');
    const [request] = fake.requests;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/v3/mail/send');
    expect(request.headers.authorization).toBe('Bearer SG.key');
    expect(request.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request.body)).toEqual({
      personalizations: [{ to: [{ email: 'ada@example.com' }], bcc: [{ email: 'audit@example.com' }] }],
      from: { email: 'noreply@herald.test', name: 'Herald' },
      reply_to: { email: 'help@herald.test' },
      subject: 'Hi',
      content: [
        { type: 'text/plain', value: 'Hi' },
        { type: 'text/html', value: '<p>Hi</p>' },
      ],
      attachments: [{ content: 'QQ==', filename: 'a.txt', type: 'text/plain', disposition: 'attachment' }],
    });
  });

  it('check() GETs /v3/scopes with the key', async () => {
    fake.setHandler(() => ({ status: 200, body: { scopes: ['mail.send'] } }));
    await sendgridProvider.check!(credentials(), ctx);
    expect(fake.requests[0]).toMatchObject({ method: 'GET', path: '/v3/scopes' });
    expect(fake.requests[0].headers.authorization).toBe('Bearer SG.key');
  });

  it('maps 500 to retryable, 400 to not retryable with the raw answer', async () => {
    fake.setHandler(() => ({ status: 500, body: { errors: [{ message: 'boom' }] } }));
    const serverError = await sendgridProvider.send(credentials(), message, ctx).catch((e) => e);
    expect(serverError).toBeInstanceOf(ProviderError);
    expect(serverError.retryable).toBe(true);

    fake.setHandler(() => ({ status: 400, body: { errors: [{ message: 'bad from' }] } }));
    const clientError = await sendgridProvider.send(credentials(), message, ctx).catch((e) => e);
    expect(clientError.retryable).toBe(false);
    expect(clientError.statusCode).toBe(400);
    expect(clientError.raw).toBe('{"errors":[{"message":"bad from"}]}');
  });

  it('maps a timeout and an unreachable port to retryable errors', async () => {
    fake.setHandler(() => 'hang');
    const timeout = await sendgridProvider.send(credentials(), message, hangCtx).catch((e) => e);
    expect(timeout.retryable).toBe(true);
    expect(timeout.message).toContain('timed out after 300 ms');

    const port = await unusedPort();
    const unreachable = await sendgridProvider
      .send({ ...credentials(), baseUrl: `http://127.0.0.1:${port}` }, message, ctx)
      .catch((e) => e);
    expect(unreachable.retryable).toBe(true);
    expect(unreachable.message).toContain('ECONNREFUSED');
  });
});
