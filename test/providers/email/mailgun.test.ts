import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mailgunProvider } from '../../../src/providers/email/mailgun.js';
import { startHttpFake, type HttpFake, type RecordedRequest } from '../../fakes/http-fake.js';
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

function formDataOf(request: RecordedRequest): Promise<FormData> {
  return new Response(request.body, { headers: { 'content-type': String(request.headers['content-type']) } }).formData();
}

describe('mailgun', () => {
  const credentials = () => ({ apiKey: 'key-1', domain: 'mg.herald.test', from: 'noreply@herald.test', senderName: 'Herald', baseUrl: fake.url });
  const basic = `Basic ${Buffer.from('api:key-1').toString('base64')}`;

  it('POSTs a url-encoded form to /v3/{domain}/messages with basic auth api:key', async () => {
    fake.setHandler(() => ({ status: 200, body: { id: '<2026.1@mg.herald.test>', message: 'Queued. Thank you.' } }));
    const result = await mailgunProvider.send(credentials(), message, ctx);
    expect(result.id).toBe('<2026.1@mg.herald.test>');
    const [request] = fake.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/v3/mg.herald.test/messages' });
    expect(request.headers.authorization).toBe(basic);
    expect(request.headers['content-type']).toContain('application/x-www-form-urlencoded');
    const form = new URLSearchParams(request.body);
    expect(form.get('from')).toBe('"Herald" <noreply@herald.test>');
    expect(form.getAll('to')).toEqual(['ada@example.com', 'bob@example.com']);
    expect(form.getAll('cc')).toEqual(['cc@example.com']);
    expect(form.get('subject')).toBe('Invoice');
    expect(form.get('html')).toBe('<p>Paid</p>');
    expect(form.get('text')).toBe('Paid');
    expect(form.get('h:Reply-To')).toBe('billing@herald.test');
  });

  it('switches to multipart/form-data for attachments', async () => {
    await mailgunProvider.send(credentials(), withAttachment, ctx);
    const form = await formDataOf(fake.requests[0]);
    const file = form.get('attachment') as File;
    expect(file.name).toBe('invoice.pdf');
    expect(file.type).toBe('application/pdf');
    expect(await file.text()).toBe('%PDF');
    expect(form.getAll('to')).toEqual(['ada@example.com', 'bob@example.com']);
  });

  it('check() GETs the domain; 401 is not retryable', async () => {
    await mailgunProvider.check!(credentials(), ctx);
    expect(fake.requests[0]).toMatchObject({ method: 'GET', path: '/v3/domains/mg.herald.test' });
    fake.setHandler(() => ({ status: 401, body: 'Forbidden' }));
    expect((await providerFailure(mailgunProvider.check!(credentials(), ctx))).retryable).toBe(false);
  });
});
