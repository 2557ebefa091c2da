import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nodemailerProvider } from '../../../src/providers/email/nodemailer.js';
import { createProviderContext } from '../../../src/providers/outbound.js';
import { ProviderError } from '../../../src/providers/ports.js';
import { unusedPort } from '../../fakes/http-fake.js';
import { testProviderContext } from '../../fakes/provider-context.js';
import { startSmtpFake, type SmtpFake } from '../../fakes/smtp-fake.js';

describe('nodemailer (SMTP)', () => {
  let smtp: SmtpFake;
  const ctx = testProviderContext();
  const credentialsFor = (port: number, extra: Record<string, unknown> = {}) => ({
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTls: true,
    user: 'mailer',
    password: 's3cret',
    from: 'noreply@herald.test',
    senderName: 'Herald',
    ...extra,
  });

  beforeEach(async () => {
    smtp = await startSmtpFake({ auth: { user: 'mailer', password: 's3cret' } });
  });
  afterEach(async () => {
    await smtp.close();
  });

  it('delivers html, text, reply-to, cc and an attachment, authenticated', async () => {
    const result = await nodemailerProvider.send(
      credentialsFor(smtp.port),
      {
        to: ['ada@example.com'],
        cc: ['cc@example.com'],
        subject: 'Welcome, Ada',
        html: '<p>Hello <b>Ada</b></p>',
        text: 'Hello Ada',
        replyTo: 'support@herald.test',
        attachments: [{ filename: 'note.txt', content: Buffer.from('attached!').toString('base64'), mime: 'text/plain' }],
      },
      ctx,
    );
    expect(result.id).toMatch(/^<.+>$/);
    expect(smtp.mails).toHaveLength(1);
    const { envelope, parsed } = smtp.mails[0];
    expect(envelope).toEqual({ from: 'noreply@herald.test', to: ['ada@example.com', 'cc@example.com'] });
    expect(parsed.from?.value).toEqual([{ address: 'noreply@herald.test', name: 'Herald' }]);
    expect(parsed.to && !Array.isArray(parsed.to) && parsed.to.text).toBe('ada@example.com');
    expect(parsed.subject).toBe('Welcome, Ada');
    expect(parsed.html).toBe('<p>Hello <b>Ada</b></p>');
    expect(parsed.text?.trim()).toBe('Hello Ada');
    expect(parsed.replyTo?.text).toBe('support@herald.test');
    expect(parsed.attachments.map((a) => [a.filename, a.content.toString()])).toEqual([['note.txt', 'attached!']]);
  });

  it('check() authenticates; a wrong password is a non-retryable error', async () => {
    await expect(nodemailerProvider.check!(credentialsFor(smtp.port), ctx)).resolves.toBeUndefined();
    const error = await nodemailerProvider.check!(credentialsFor(smtp.port, { password: 'wrong' }), ctx).catch((e) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.retryable).toBe(false);
    expect(error.statusCode).toBe(535);
  });

  it('an unreachable port is a retryable error', async () => {
    const port = await unusedPort();
    const error = await nodemailerProvider
      .send(credentialsFor(port), { to: ['a@example.com'], subject: 's', html: 'h' }, ctx)
      .catch((e) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.retryable).toBe(true);
  });

  it('refuses a loopback SMTP host that is not allowed, before connecting', async () => {
    const closed = createProviderContext({ timeoutMs: 1000, userAgent: 'UA', allow: [] });
    const error = await nodemailerProvider
      .send(credentialsFor(smtp.port), { to: ['a@example.com'], subject: 's', html: 'h' }, closed)
      .catch((e) => e);
    expect(error.message).toBe('Outbound request to 127.0.0.1 refused: loopback address');
    expect(smtp.mails).toHaveLength(0);
  });
});
