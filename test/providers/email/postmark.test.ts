import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { postmarkProvider } from '../../../src/providers/email/postmark.js';
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

describe('postmark', () => {
  const credentials = () => ({ apiKey: 'pm-token', from: 'noreply@herald.test', baseUrl: fake.url });

  it('POSTs /email with X-Postmark-Server-Token and PascalCase fields', async () => {
    fake.setHandler(() => ({ status: 200, body: { To: 'ada@example.com', SubmittedAt: '2026-01-01T00:00:00Z', MessageID: 'pm-1', ErrorCode: 0, Message: 'OK' } }));
    const result = await postmarkProvider.send(credentials(), withAttachment, ctx);
    expect(result).toMatchObject({ id: 'pm-1', date: '2026-01-01T00:00:00Z' });
    const [request] = fake.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/email' });
    expect(request.headers['x-postmark-server-token']).toBe('pm-token');
    expect(request.headers.accept).toBe('application/json');
    expect(JSON.parse(request.body)).toEqual({
      From: 'noreply@herald.test',
      To: 'ada@example.com,bob@example.com',
      Cc: 'cc@example.com',
      Subject: 'Invoice',
      HtmlBody: '<p>Paid</p>',
      TextBody: 'Paid',
      ReplyTo: 'billing@herald.test',
      Attachments: [{ Name: 'invoice.pdf', Content: 'JVBERg==', ContentType: 'application/pdf' }],
    });
  });

  it('check() GETs /server; a 422 answer is not retryable', async () => {
    await postmarkProvider.check!(credentials(), ctx);
    expect(fake.requests[0]).toMatchObject({ method: 'GET', path: '/server' });
    fake.setHandler(() => ({ status: 422, body: { ErrorCode: 300, Message: 'Invalid email request' } }));
    const error = await providerFailure(postmarkProvider.send(credentials(), message, ctx));
    expect(error).toMatchObject({ retryable: false, statusCode: 422 });
  });
});
