import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { simpleParser } from 'mailparser';
import { signRequest } from '../../../src/providers/aws-sigv4.js';
import { sesProvider } from '../../../src/providers/email/ses.js';
import { startHttpFake, type HttpFake, type RecordedRequest } from '../../fakes/http-fake.js';
import { testProviderContext } from '../../fakes/provider-context.js';
import { providerFailure } from '../../fakes/provider-errors.js';

/** Re-signs what the fake received with the same key; equal signatures mean the request was signed as sent. */
function expectValidSignature(request: RecordedRequest, baseUrl: string): void {
  const authorization = String(request.headers.authorization);
  const signed = /SignedHeaders=([^,]+)/.exec(authorization)![1].split(';');
  const headers = Object.fromEntries(
    signed.filter((name) => !['host', 'x-amz-date'].includes(name)).map((name) => [name, String(request.headers[name])]),
  );
  const date = String(request.headers['x-amz-date']);
  const at = new Date(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`);
  const expected = signRequest(
    { method: request.method, url: new URL(`${baseUrl}${request.path}`), headers, body: request.body },
    { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret', region: 'eu-west-1', service: 'ses' },
    at,
  );
  expect(authorization).toBe(expected.authorization);
}

describe('ses (v2 SendEmail)', () => {
  let fake: HttpFake;
  const ctx = testProviderContext();
  const credentials = () => ({ apiKey: 'AKIDEXAMPLE', secretKey: 'secret', region: 'eu-west-1', from: 'noreply@herald.test', baseUrl: fake.url });

  beforeEach(async () => {
    fake = await startHttpFake(() => ({ status: 200, body: { MessageId: 'ses-1' } }));
  });
  afterEach(async () => {
    await fake.close();
  });

  it('POSTs /v2/email/outbound-emails with Simple content, SigV4-signed for ses in the region', async () => {
    const result = await sesProvider.send(
      credentials(),
      { to: ['ada@example.com'], bcc: ['audit@example.com'], subject: 'Hi', html: '<p>Hi</p>', text: 'Hi', replyTo: 'r@herald.test' },
      ctx,
    );
    expect(result.id).toBe('ses-1');
    const [request] = fake.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/v2/email/outbound-emails' });
    expect(request.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/ses\/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=[0-9a-f]{64}$/,
    );
    expectValidSignature(request, fake.url);
    expect(JSON.parse(request.body)).toEqual({
      FromEmailAddress: 'noreply@herald.test',
      Destination: { ToAddresses: ['ada@example.com'], BccAddresses: ['audit@example.com'] },
      ReplyToAddresses: ['r@herald.test'],
      Content: {
        Simple: {
          Subject: { Data: 'Hi', Charset: 'UTF-8' },
          Body: { Html: { Data: '<p>Hi</p>', Charset: 'UTF-8' }, Text: { Data: 'Hi', Charset: 'UTF-8' } },
        },
      },
    });
  });

  it('sends a raw MIME message when there are attachments', async () => {
    await sesProvider.send(
      credentials(),
      { to: ['ada@example.com'], subject: 'Report', html: '<p>See attached</p>', attachments: [{ filename: 'r.csv', content: 'YSxi', mime: 'text/csv' }] },
      ctx,
    );
    const body = JSON.parse(fake.requests[0].body);
    const mime = await simpleParser(Buffer.from(body.Content.Raw.Data, 'base64'));
    expect(mime.subject).toBe('Report');
    expect(mime.html).toBe('<p>See attached</p>');
    expect(mime.attachments.map((a) => [a.filename, a.content.toString()])).toEqual([['r.csv', 'a,b']]);
  });

  it('check() GETs the account, signed', async () => {
    await sesProvider.check!(credentials(), ctx);
    expect(fake.requests[0]).toMatchObject({ method: 'GET', path: '/v2/email/account' });
    expectValidSignature(fake.requests[0], fake.url);
  });

  it('a 403 signature mismatch is not retryable, a throttle is', async () => {
    fake.setHandler(() => ({ status: 403, body: { message: 'The request signature we calculated does not match' } }));
    expect((await providerFailure(sesProvider.check!(credentials(), ctx))).retryable).toBe(false);
    fake.setHandler(() => ({ status: 429, body: { message: 'Maximum sending rate exceeded.' } }));
    expect((await providerFailure(sesProvider.check!(credentials(), ctx))).retryable).toBe(true);
  });
});
