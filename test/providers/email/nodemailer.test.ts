import type { AddressInfo } from 'node:net';
import SMTPConnection from 'nodemailer/lib/smtp-connection/index.js';
import { SMTPServer } from 'smtp-server';
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

/** A self-signed certificate (and its key) for relay.herald.test only, valid 2000–2100: the tests' own trust anchor. */
const RELAY_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgS2zTjDu8K92wHrY/
P+tj/PTiZBZN80XBwY/RUholZsShRANCAARNeUpZKrzbHXGEBfYeQ8C+5Q65hNZT
7cr2tvC3PDM36/fvXnu4oX9I3ukNksIU7az+kaYFbb8LMFmdGaDNmc3e
-----END PRIVATE KEY-----`;
const RELAY_CERT = `-----BEGIN CERTIFICATE-----
MIIBejCCAR+gAwIBAgIBATAKBggqhkjOPQQDAjAcMRowGAYDVQQDDBFyZWxheS5o
ZXJhbGQudGVzdDAgFw0wMDAxMDEwMDAwMDBaGA8yMTAwMDEwMTAwMDAwMFowHDEa
MBgGA1UEAwwRcmVsYXkuaGVyYWxkLnRlc3QwWTATBgcqhkjOPQIBBggqhkjOPQMB
BwNCAARNeUpZKrzbHXGEBfYeQ8C+5Q65hNZT7cr2tvC3PDM36/fvXnu4oX9I3ukN
ksIU7az+kaYFbb8LMFmdGaDNmc3eo1AwTjAcBgNVHREEFTATghFyZWxheS5oZXJh
bGQudGVzdDAPBgNVHRMBAf8EBTADAQH/MB0GA1UdDgQWBBSWPs1w1Cw3eN1dv68+
A62pbWD50jAKBggqhkjOPQQDAgNJADBGAiEAnYGfv5EN66jOotP1BwLpnklSKn+b
kEnAjnH4JnEvhW4CIQCNbm+gHxDbJnfsln9hXvXEhqS1wexDjluHM1Tv2aoIZA==
-----END CERTIFICATE-----`;

interface RecordingSmtp {
  port: number;
  /** TCP connections accepted. */
  connections: number;
  /** Per connection: the EHLO name, the SNI name asked for and whether the session was secured. */
  sessions: Array<{ ehlo: string; servername: unknown; secure: boolean }>;
  /** Envelope recipients of each accepted mail. */
  mails: string[][];
  close(): Promise<void>;
}

/** An SMTP server on 127.0.0.1 presenting RELAY_CERT, with STARTTLS (`plain`) or implicit TLS (`implicit`). */
async function startRecordingSmtp(mode: 'plain' | 'implicit'): Promise<RecordingSmtp> {
  const recorded: RecordingSmtp = { port: 0, connections: 0, sessions: [], mails: [], close: async () => undefined };
  const server = new SMTPServer({
    secure: mode === 'implicit',
    key: RELAY_KEY,
    cert: RELAY_CERT,
    authOptional: true,
    disabledCommands: ['AUTH'],
    logger: false,
    onConnect(_session, callback) {
      recorded.connections += 1;
      callback();
    },
    onMailFrom(_address, session, callback) {
      recorded.sessions.push({ ehlo: session.hostNameAppearsAs, servername: session.servername, secure: session.secure });
      callback();
    },
    onData(stream, session, callback) {
      stream.resume();
      stream.on('end', () => {
        recorded.mails.push(session.envelope.rcptTo.map((rcpt) => rcpt.address));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  recorded.port = (server.server.address() as AddressInfo).port;
  recorded.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return recorded;
}

describe('nodemailer (SMTP): the guard at connection time', () => {
  let smtp: RecordingSmtp;
  const mail = { to: ['ada@example.com'], subject: 's', html: 'h' };
  afterEach(async () => {
    await smtp.close();
  });

  it('refuses a name that resolved to a public address for the check and to loopback when connecting (DNS rebinding)', async () => {
    smtp = await startRecordingSmtp('plain');
    let lookups = 0;
    // First answer (the check before connecting): public. Later ones (the connection's): loopback. "localhost" is a name
    // the system resolver answers with a loopback address, so a second resolution by nodemailer itself would reach the server.
    const lookup = async () => (++lookups === 1 ? ['93.184.216.34'] : ['127.0.0.1']);
    const ctx = createProviderContext({ timeoutMs: 1000, userAgent: 'UA', allow: [], lookup });
    const credentials = { host: 'localhost', port: smtp.port, ignoreTls: true, from: 'noreply@herald.test' };

    const error = await nodemailerProvider.send(credentials, mail, ctx).catch((e) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.retryable).toBe(false);
    expect(error.message).toBe('Outbound request to localhost (127.0.0.1) refused: loopback address');
    expect(lookups).toBe(2);
    expect(smtp.connections).toBe(0);
    expect(smtp.mails).toHaveLength(0);

    lookups = 0;
    const checkError = await nodemailerProvider.check!(credentials, ctx).catch((e) => e);
    expect(checkError).toMatchObject({ retryable: false, message: 'Outbound request to localhost (127.0.0.1) refused: loopback address' });
    expect(smtp.connections).toBe(0);
  });

  it('delivers to an allowed host name over STARTTLS, verifying the certificate for that name, not the address connected to', async () => {
    smtp = await startRecordingSmtp('plain');
    let lookups = 0;
    const lookup = async () => {
      lookups += 1;
      return ['127.0.0.1'];
    };
    const ctx = createProviderContext({ timeoutMs: 2000, userAgent: 'UA', allow: [`relay.herald.test:${smtp.port}`], lookup });
    const credentials = {
      host: 'relay.herald.test',
      port: smtp.port,
      secure: false,
      requireTls: true,
      tlsOptions: JSON.stringify({ ca: RELAY_CERT, minVersion: 'TLSv1.2' }),
      from: 'noreply@herald.test',
    };

    const result = await nodemailerProvider.send(credentials, mail, ctx);
    expect(result.id).toMatch(/^<.+>$/);
    // The check before connecting needs no lookup for a host the allow list names: this one is the connection's.
    expect(lookups).toBe(1);
    expect(smtp.mails).toEqual([['ada@example.com']]);
    expect(smtp.sessions).toHaveLength(1);
    expect(smtp.sessions[0]).toMatchObject({ servername: 'relay.herald.test', secure: true });
    // The EHLO name is the one nodemailer announces when told the configured host (it does not derive from the host).
    expect(smtp.sessions[0].ehlo).toBe(new SMTPConnection({ host: 'relay.herald.test' }).name);
    await expect(nodemailerProvider.check!(credentials, ctx)).resolves.toBeUndefined();
  });

  it('delivers over implicit TLS (secure) with the certificate checked against the configured host name', async () => {
    smtp = await startRecordingSmtp('implicit');
    const lookup = async () => ['127.0.0.1'];
    const ctx = createProviderContext({ timeoutMs: 2000, userAgent: 'UA', allow: ['relay.herald.test'], lookup });
    const credentials = { host: 'relay.herald.test', port: smtp.port, secure: true, tlsOptions: { ca: RELAY_CERT }, from: 'noreply@herald.test' };

    await nodemailerProvider.send(credentials, mail, ctx);
    expect(smtp.mails).toEqual([['ada@example.com']]);
    expect(smtp.sessions[0]).toMatchObject({ servername: 'relay.herald.test', secure: true });
  });

  it('a certificate for another name is still refused, naming the configured host', async () => {
    smtp = await startRecordingSmtp('plain');
    const lookup = async () => ['127.0.0.1'];
    const ctx = createProviderContext({ timeoutMs: 2000, userAgent: 'UA', allow: ['mail.herald.test'], lookup });
    const credentials = {
      host: 'mail.herald.test',
      port: smtp.port,
      requireTls: true,
      tlsOptions: { ca: RELAY_CERT },
      from: 'noreply@herald.test',
    };

    const error = await nodemailerProvider.send(credentials, mail, ctx).catch((e) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.message).toContain("Host: mail.herald.test. is not in the cert's altnames: DNS:relay.herald.test");
    expect(smtp.mails).toHaveLength(0);
  });
});
