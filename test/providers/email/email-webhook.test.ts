import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { emailWebhookProvider } from '../../../src/providers/email/email-webhook.js';
import { startHttpFake, type HttpFake } from '../../fakes/http-fake.js';
import { invoiceEmail as message } from '../../fakes/email-messages.js';
import { testProviderContext } from '../../fakes/provider-context.js';

const ctx = testProviderContext();

let fake: HttpFake;
beforeEach(async () => {
  fake = await startHttpFake(() => ({ status: 200, body: { id: 'vendor-id' } }));
});
afterEach(async () => {
  await fake.close();
});

describe('email-webhook', () => {
  it('POSTs the email as JSON signed with x-novu-signature (HMAC-SHA256 hex of the body)', async () => {
    const credentials = { webhookUrl: `${fake.url}/inbound/email`, secretKey: 'whsec', from: 'noreply@herald.test' };
    const result = await emailWebhookProvider.send(credentials, message, ctx);
    expect(result.id).toBe('vendor-id');
    const [request] = fake.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/inbound/email' });
    expect(request.headers['x-novu-signature']).toBe(createHmac('sha256', 'whsec').update(request.body).digest('hex'));
    expect(JSON.parse(request.body)).toMatchObject({
      from: 'noreply@herald.test',
      to: ['ada@example.com', 'bob@example.com'],
      subject: 'Invoice',
      html: '<p>Paid</p>',
      text: 'Paid',
      replyTo: 'billing@herald.test',
    });
  });
});
