import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resendProvider } from '../../../src/providers/email/resend.js';
import { startHttpFake, type HttpFake } from '../../fakes/http-fake.js';
import { invoiceEmail as message, invoiceEmailWithAttachment as withAttachment } from '../../fakes/email-messages.js';
import { testProviderContext } from '../../fakes/provider-context.js';
import { providerFailure } from '../../fakes/provider-errors.js';

const ctx = testProviderContext();

let fake: HttpFake;
beforeEach(async () => {
  fake = await startHttpFake(() => ({ status: 200, body: { id: 'vendor-id' } }));
});
afterEach(async () => {
  await fake.close();
});

describe('resend', () => {
  const credentials = () => ({ apiKey: 're_123', from: 'noreply@herald.test', senderName: 'Herald', baseUrl: fake.url });

  it('POSTs /emails with a bearer key', async () => {
    const result = await resendProvider.send(credentials(), withAttachment, ctx);
    expect(result.id).toBe('vendor-id');
    const [request] = fake.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/emails' });
    expect(request.headers.authorization).toBe('Bearer re_123');
    expect(JSON.parse(request.body)).toEqual({
      from: '"Herald" <noreply@herald.test>',
      to: ['ada@example.com', 'bob@example.com'],
      cc: ['cc@example.com'],
      reply_to: 'billing@herald.test',
      subject: 'Invoice',
      html: '<p>Paid</p>',
      text: 'Paid',
      attachments: [{ filename: 'invoice.pdf', content: 'JVBERg==', content_type: 'application/pdf' }],
    });
  });

  it('check() accepts a sending-only key but not a wrong one', async () => {
    fake.setHandler(() => ({ status: 401, body: { statusCode: 401, name: 'restricted_api_key', message: 'This API key is restricted' } }));
    await resendProvider.check!(credentials(), ctx);
    expect(fake.requests[0]).toMatchObject({ method: 'GET', path: '/domains' });
    fake.setHandler(() => ({ status: 401, body: { statusCode: 401, name: 'validation_error', message: 'API key is invalid' } }));
    expect((await providerFailure(resendProvider.check!(credentials(), ctx))).retryable).toBe(false);
  });
});
