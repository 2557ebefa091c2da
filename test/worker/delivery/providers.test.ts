import { createHmac, generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFake, type HttpFake, type RecordedRequest } from '../../fakes/http-fake.js';
import { startHttp2Fake, type Http2Fake } from '../../fakes/http2-fake.js';
import { startSmtpFake, type SmtpFake } from '../../fakes/smtp-fake.js';
import { startTestServer, type TestServer } from '../../helpers/test-server.js';
import { createWorkflow } from '../engine-helpers.js';
import {
  createIntegration,
  createSubscriber,
  deliveryEnv,
  outcomeDetails,
  setChannelCredentials,
  triggerAndSettle,
  type Delivery,
} from './delivery-helpers.js';

/**
 * Every deliverable provider, end to end: POST /v1/events/trigger → worker → provider → a local fake that
 * checks the vendor's exact request → the message (GET /v1/messages) and the job's details (GET /v1/notifications/{id}).
 */

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const p8 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

const SUBSCRIBER = { subscriberId: 'ann-delivery', firstName: 'Ann', email: 'ann@example.com', phone: '+15550001111' };
const PAYLOAD = { orderId: 'o-42' };
const SUBJECT = 'Order o-42 for Ann';
const HTML = '<p>Hello Ann, order <b>o-42</b> shipped.</p>';
const TEXT = 'Hello Ann, order o-42 shipped.';
const SHORT = 'Order o-42 shipped, Ann';
const PUSH_TITLE = 'Order o-42';
const PUSH_BODY = 'Hi Ann, it shipped';
const FROM = 'noreply@herald.test';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ worker: true, env: deliveryEnv() });
  await createSubscriber(server, SUBSCRIBER);
  await createWorkflow(server, {
    workflowId: 'mail',
    steps: [{ name: 'mail', type: 'email', controlValues: { subject: 'Order {{ payload.orderId }} for {{ subscriber.firstName }}', body: '<p>Hello {{ subscriber.firstName }}, order <b>{{ payload.orderId }}</b> shipped.</p>' } }],
  });
  await createWorkflow(server, { workflowId: 'text', steps: [{ name: 'text', type: 'sms', controlValues: { body: 'Order {{ payload.orderId }} shipped, {{ subscriber.firstName }}' } }] });
  await createWorkflow(server, { workflowId: 'talk', steps: [{ name: 'talk', type: 'chat', controlValues: { body: 'Order {{ payload.orderId }} shipped, {{ subscriber.firstName }}' } }] });
  await createWorkflow(server, {
    workflowId: 'buzz',
    steps: [{ name: 'buzz', type: 'push', controlValues: { subject: 'Order {{ payload.orderId }}', body: 'Hi {{ subscriber.firstName }}, it shipped' } }],
  });
});
afterAll(async () => {
  await server?.close();
});

function json(request: RecordedRequest): any {
  expect(request.headers['content-type']).toMatch(/^application\/json/);
  return JSON.parse(request.body);
}

function form(request: RecordedRequest): Record<string, string> {
  expect(request.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
  return Object.fromEntries(new URLSearchParams(request.body));
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const signature = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');

/** Checks the message and the job of a channel step that was sent through `providerId`. */
function expectSent(delivery: Delivery, providerId: string, expected: { message: Record<string, unknown>; raw: string }): void {
  expect(delivery.messages).toHaveLength(1);
  const [message] = delivery.messages;
  expect(message).toMatchObject({ status: 'sent', providerId, transactionId: delivery.transactionId, ...expected.message });
  expect(message.deliveredAt).toHaveLength(1);
  expect(Date.parse(message.deliveredAt[0])).not.toBeNaN();
  expect(message.errorText).toBeUndefined();
  expect(delivery.job).toMatchObject({ status: 'completed', providerId });
  const details = outcomeDetails(delivery.job);
  expect(details).toHaveLength(1);
  expect(details[0]).toMatchObject({ status: 'Success', providerId, isRetry: false, raw: expected.raw });
  expect(details[0].detail).toMatch(new RegExp(`^Message sent via ${providerId}`));
}

interface HttpCase {
  providerId: string;
  channel: 'email' | 'sms' | 'chat' | 'push';
  credentials(fake: HttpFake): Record<string, unknown>;
  /** Subscriber channel credentials (chat/push), set with PUT /v1/subscribers/{id}/credentials. */
  channelCredentials?(fake: HttpFake): Record<string, unknown>;
  reply: { status?: number; headers?: Record<string, string>; body?: unknown };
  /** Checks the requests the fake received (in order). */
  expectRequests(requests: RecordedRequest[], fake: HttpFake): void;
  message(fake: HttpFake): Record<string, unknown>;
}

const emailMessage = { subject: SUBJECT, content: HTML, email: SUBSCRIBER.email };
const smsMessage = { content: SHORT, phone: SUBSCRIBER.phone };
const pushMessage = (tokens: string[]) => ({ title: PUSH_TITLE, content: PUSH_BODY, deviceTokens: tokens });

const HTTP_CASES: HttpCase[] = [
  {
    providerId: 'sendgrid',
    channel: 'email',
    credentials: (fake) => ({ apiKey: 'SG.key', from: FROM, senderName: 'Herald', baseUrl: fake.url }),
    reply: { status: 202, headers: { 'x-message-id': 'sg-1' }, body: '' },
    expectRequests([request]) {
      expect(request).toMatchObject({ method: 'POST', path: '/v3/mail/send' });
      expect(request.headers.authorization).toBe('Bearer SG.key');
      expect(json(request)).toEqual({
        personalizations: [{ to: [{ email: SUBSCRIBER.email }] }],
        from: { email: FROM, name: 'Herald' },
        subject: SUBJECT,
        content: [{ type: 'text/plain', value: TEXT }, { type: 'text/html', value: HTML }],
      });
    },
    message: () => emailMessage,
  },
  {
    providerId: 'mailgun',
    channel: 'email',
    credentials: (fake) => ({ apiKey: 'mg-key', domain: 'mg.herald.test', from: FROM, baseUrl: fake.url }),
    reply: { body: { id: '<m1@mg.herald.test>', message: 'Queued. Thank you.' } },
    expectRequests([request]) {
      expect(request).toMatchObject({ method: 'POST', path: '/v3/mg.herald.test/messages' });
      expect(request.headers.authorization).toBe(basic('api', 'mg-key'));
      expect(form(request)).toEqual({ from: FROM, to: SUBSCRIBER.email, subject: SUBJECT, html: HTML, text: TEXT });
    },
    message: () => emailMessage,
  },
  {
    providerId: 'postmark',
    channel: 'email',
    credentials: (fake) => ({ apiKey: 'pm-token', from: FROM, baseUrl: fake.url }),
    reply: { body: { MessageID: 'pm-1', SubmittedAt: '2026-01-05T10:00:00Z', ErrorCode: 0, Message: 'OK' } },
    expectRequests([request]) {
      expect(request).toMatchObject({ method: 'POST', path: '/email' });
      expect(request.headers['x-postmark-server-token']).toBe('pm-token');
      expect(json(request)).toEqual({ From: FROM, To: SUBSCRIBER.email, Subject: SUBJECT, HtmlBody: HTML, TextBody: TEXT });
    },
    message: () => emailMessage,
  },
  {
    providerId: 'resend',
    channel: 'email',
    credentials: (fake) => ({ apiKey: 're_key', from: FROM, baseUrl: fake.url }),
    reply: { body: { id: 're-1' } },
    expectRequests([request]) {
      expect(request).toMatchObject({ method: 'POST', path: '/emails' });
      expect(request.headers.authorization).toBe('Bearer re_key');
      expect(json(request)).toEqual({ from: FROM, to: [SUBSCRIBER.email], subject: SUBJECT, html: HTML, text: TEXT });
    },
    message: () => emailMessage,
  },
  {
    providerId: 'ses',
    channel: 'email',
    credentials: (fake) => ({ apiKey: 'AKIDEXAMPLE', secretKey: 'secret', region: 'eu-west-1', from: FROM, baseUrl: fake.url }),
    reply: { body: { MessageId: 'ses-1' } },
    expectRequests([request]) {
      expect(request).toMatchObject({ method: 'POST', path: '/v2/email/outbound-emails' });
      expect(request.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/ses\/aws4_request, SignedHeaders=[^,]+, Signature=[0-9a-f]{64}$/);
      expect(json(request)).toEqual({
        FromEmailAddress: FROM,
        Destination: { ToAddresses: [SUBSCRIBER.email] },
        Content: {
          Simple: {
            Subject: { Data: SUBJECT, Charset: 'UTF-8' },
            Body: { Html: { Data: HTML, Charset: 'UTF-8' }, Text: { Data: TEXT, Charset: 'UTF-8' } },
          },
        },
      });
    },
    message: () => emailMessage,
  },
  {
    providerId: 'email-webhook',
    channel: 'email',
    credentials: (fake) => ({ webhookUrl: `${fake.url}/mail-hook`, secretKey: 'hook-secret', from: FROM }),
    reply: { body: { id: 'wh-1' } },
    expectRequests([request]) {
      expect(request).toMatchObject({ method: 'POST', path: '/mail-hook' });
      expect(request.headers['x-novu-signature']).toBe(signature('hook-secret', request.body));
      expect(json(request)).toEqual({ from: FROM, to: [SUBSCRIBER.email], subject: SUBJECT, html: HTML, text: TEXT, overrides: {} });
    },
    message: () => emailMessage,
  },
  {
    providerId: 'twilio',
    channel: 'sms',
    credentials: (fake) => ({ accountSid: 'AC123', token: 'tw-token', from: '+15550009999', baseUrl: fake.url }),
    reply: { status: 201, body: { sid: 'SM1', date_created: 'Mon, 05 Jan 2026 10:00:00 +0000', status: 'queued' } },
    expectRequests([request]) {
      expect(request).toMatchObject({ method: 'POST', path: '/2010-04-01/Accounts/AC123/Messages.json' });
      expect(request.headers.authorization).toBe(basic('AC123', 'tw-token'));
      expect(form(request)).toEqual({ To: SUBSCRIBER.phone, Body: SHORT, From: '+15550009999' });
    },
    message: () => smsMessage,
  },
  {
    providerId: 'nexmo',
    channel: 'sms',
    credentials: (fake) => ({ apiKey: 'vn-key', secretKey: 'vn-secret', from: 'Herald', baseUrl: fake.url }),
    reply: { body: { 'message-count': '1', messages: [{ to: '15550001111', 'message-id': 'nx-1', status: '0' }] } },
    expectRequests([request]) {
      expect(request).toMatchObject({ method: 'POST', path: '/sms/json' });
      expect(form(request)).toEqual({ api_key: 'vn-key', api_secret: 'vn-secret', from: 'Herald', to: '15550001111', text: SHORT });
    },
    message: () => smsMessage,
  },
  {
    providerId: 'plivo',
    channel: 'sms',
    credentials: (fake) => ({ accountSid: 'MA1', token: 'pl-token', from: '+15550008888', baseUrl: fake.url }),
    reply: { status: 202, body: { message: 'message(s) queued', message_uuid: ['pl-1'], api_id: 'api-1' } },
    expectRequests([request]) {
      expect(request).toMatchObject({ method: 'POST', path: '/v1/Account/MA1/Message/' });
      expect(request.headers.authorization).toBe(basic('MA1', 'pl-token'));
      expect(json(request)).toEqual({ src: '+15550008888', dst: SUBSCRIBER.phone, text: SHORT });
    },
    message: () => smsMessage,
  },
  {
    providerId: 'generic-sms',
    channel: 'sms',
    credentials: (fake) => ({ baseUrl: `${fake.url}/sms/send`, apiKey: 'gs-key', apiKeyRequestHeader: 'x-gateway-key', from: 'HERALD' }),
    reply: { body: { result: { messageId: 'gs-1' } } },
    expectRequests([request]) {
      expect(request).toMatchObject({ method: 'POST', path: '/sms/send' });
      expect(request.headers['x-gateway-key']).toBe('gs-key');
      expect(json(request)).toEqual({ to: SUBSCRIBER.phone, content: SHORT, from: 'HERALD' });
    },
    message: () => smsMessage,
  },
  {
    providerId: 'slack',
    channel: 'chat',
    credentials: () => ({}),
    channelCredentials: (fake) => ({ webhookUrl: `${fake.url}/services/T1/B2/xyz` }),
    reply: { body: 'ok' },
    expectRequests([request]) {
      expect(request).toMatchObject({ method: 'POST', path: '/services/T1/B2/xyz' });
      expect(json(request)).toEqual({ text: SHORT });
    },
    message: (fake) => ({ content: SHORT, directWebhookUrl: `${fake.url}/services/T1/B2/xyz` }),
  },
  {
    providerId: 'discord',
    channel: 'chat',
    credentials: () => ({}),
    channelCredentials: (fake) => ({ webhookUrl: `${fake.url}/api/webhooks/1/tok` }),
    reply: { body: { id: 'd-1', content: SHORT } },
    expectRequests([request]) {
      expect(request).toMatchObject({ method: 'POST', path: '/api/webhooks/1/tok?wait=true' });
      expect(json(request)).toEqual({ content: SHORT });
    },
    message: (fake) => ({ content: SHORT, directWebhookUrl: `${fake.url}/api/webhooks/1/tok` }),
  },
  {
    providerId: 'msteams',
    channel: 'chat',
    credentials: () => ({}),
    channelCredentials: (fake) => ({ webhookUrl: `${fake.url}/webhookb2/abc` }),
    reply: { body: '1' },
    expectRequests([request]) {
      expect(request).toMatchObject({ method: 'POST', path: '/webhookb2/abc' });
      expect(json(request)).toEqual({ '@type': 'MessageCard', '@context': 'https://schema.org/extensions', summary: SHORT, text: SHORT });
    },
    message: (fake) => ({ content: SHORT, directWebhookUrl: `${fake.url}/webhookb2/abc` }),
  },
  {
    providerId: 'mattermost',
    channel: 'chat',
    credentials: () => ({}),
    channelCredentials: (fake) => ({ webhookUrl: `${fake.url}/hooks/mm1`, channel: 'town-square' }),
    reply: { body: 'ok' },
    expectRequests([request]) {
      expect(request).toMatchObject({ method: 'POST', path: '/hooks/mm1' });
      expect(json(request)).toEqual({ text: SHORT, channel: 'town-square' });
    },
    message: (fake) => ({ content: SHORT, directWebhookUrl: `${fake.url}/hooks/mm1` }),
  },
  {
    // No subscriber credentials: the integration's webhookUrl is the fallback.
    providerId: 'chat-webhook',
    channel: 'chat',
    credentials: (fake) => ({ webhookUrl: `${fake.url}/chat-hook`, secretKey: 'chat-secret' }),
    reply: { body: { id: 'cw-1' } },
    expectRequests([request]) {
      expect(request).toMatchObject({ method: 'POST', path: '/chat-hook' });
      expect(request.headers['x-novu-signature']).toBe(signature('chat-secret', request.body));
      expect(json(request)).toEqual({ content: SHORT, overrides: {} });
    },
    message: (fake) => ({ content: SHORT, directWebhookUrl: `${fake.url}/chat-hook` }),
  },
  {
    providerId: 'fcm',
    channel: 'push',
    credentials: (fake) => ({
      baseUrl: fake.url,
      serviceAccount: JSON.stringify({
        type: 'service_account',
        project_id: 'herald-demo',
        private_key: rsa,
        client_email: `e2e-${fake.port}@herald-demo.iam.gserviceaccount.com`,
        token_uri: `${fake.url}/token`,
      }),
    }),
    channelCredentials: () => ({ deviceTokens: ['fcm-token-1'] }),
    reply: { body: { name: 'projects/herald-demo/messages/m-1' } },
    expectRequests([tokenExchange, send]) {
      expect(tokenExchange).toMatchObject({ method: 'POST', path: '/token' });
      expect(form(tokenExchange).grant_type).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
      expect(send).toMatchObject({ method: 'POST', path: '/v1/projects/herald-demo/messages:send' });
      expect(send.headers.authorization).toBe('Bearer ya29.e2e');
      expect(json(send)).toEqual({
        message: { token: 'fcm-token-1', notification: { title: PUSH_TITLE, body: PUSH_BODY }, data: { orderId: 'o-42' } },
      });
    },
    message: () => pushMessage(['fcm-token-1']),
  },
  {
    providerId: 'expo',
    channel: 'push',
    credentials: (fake) => ({ baseUrl: fake.url, apiKey: 'expo-access' }),
    channelCredentials: () => ({ deviceTokens: ['ExponentPushToken[abc]'] }),
    reply: { body: { data: [{ status: 'ok', id: 'ex-1' }] } },
    expectRequests([request]) {
      expect(request).toMatchObject({ method: 'POST', path: '/--/api/v2/push/send' });
      expect(request.headers.authorization).toBe('Bearer expo-access');
      expect(json(request)).toEqual([{ to: 'ExponentPushToken[abc]', title: PUSH_TITLE, body: PUSH_BODY, data: PAYLOAD }]);
    },
    message: () => pushMessage(['ExponentPushToken[abc]']),
  },
  {
    providerId: 'one-signal',
    channel: 'push',
    credentials: (fake) => ({ baseUrl: fake.url, apiKey: 'os-key', applicationId: 'app-1' }),
    channelCredentials: () => ({ deviceTokens: ['sub-1', 'sub-2'] }),
    reply: { body: { id: 'os-1', external_id: null } },
    expectRequests([request]) {
      expect(request).toMatchObject({ method: 'POST', path: '/notifications?c=push' });
      expect(request.headers.authorization).toBe('Key os-key');
      expect(json(request)).toEqual({
        app_id: 'app-1',
        target_channel: 'push',
        include_subscription_ids: ['sub-1', 'sub-2'],
        headings: { en: PUSH_TITLE },
        contents: { en: PUSH_BODY },
        data: PAYLOAD,
      });
    },
    message: () => pushMessage(['sub-1', 'sub-2']),
  },
  {
    providerId: 'push-webhook',
    channel: 'push',
    credentials: (fake) => ({ webhookUrl: `${fake.url}/push-hook`, secretKey: 'push-secret' }),
    channelCredentials: () => ({ deviceTokens: ['device-a'] }),
    reply: { body: { id: 'pw-1' } },
    expectRequests([request]) {
      expect(request).toMatchObject({ method: 'POST', path: '/push-hook' });
      expect(request.headers['x-novu-signature']).toBe(signature('push-secret', request.body));
      expect(json(request)).toEqual({ target: ['device-a'], title: PUSH_TITLE, content: PUSH_BODY, payload: PAYLOAD, overrides: {} });
    },
    message: () => pushMessage(['device-a']),
  },
];

const WORKFLOW_OF = { email: 'mail', sms: 'text', chat: 'talk', push: 'buzz' } as const;

describe('delivery through each HTTP provider', () => {
  it.each(HTTP_CASES.map((entry) => [entry.providerId, entry] as const))('%s: trigger → vendor request → sent message', async (providerId, entry) => {
    const fake = await startHttpFake((request) =>
      request.path === '/token' ? { body: { access_token: 'ya29.e2e', expires_in: 3600, token_type: 'Bearer' } } : entry.reply,
    );
    try {
      const identifier = `${providerId}-e2e`;
      await createIntegration(server, { providerId, channel: entry.channel, identifier, credentials: entry.credentials(fake) });
      if (entry.channelCredentials) {
        await setChannelCredentials(server, SUBSCRIBER.subscriberId, { providerId, integrationIdentifier: identifier, credentials: entry.channelCredentials(fake) });
      }
      const delivery = await triggerAndSettle(server, {
        name: WORKFLOW_OF[entry.channel],
        to: SUBSCRIBER.subscriberId,
        payload: PAYLOAD,
        overrides: { integrationIdentifier: identifier },
      });

      entry.expectRequests(fake.requests, fake);
      const vendorAnswer = fake.requests.at(-1)!;
      expect(vendorAnswer).toBeDefined();
      const raw = providerId === 'fcm'
        ? JSON.stringify({ id: 'projects/herald-demo/messages/m-1', tokenResults: [{ token: 'fcm-token-1', ok: true }] })
        : typeof entry.reply.body === 'string' ? entry.reply.body : JSON.stringify(entry.reply.body);
      expectSent(delivery, providerId, { message: entry.message(fake), raw });
      for (const request of fake.requests) expect(request.headers['user-agent']).toMatch(/^Herald\//);
    } finally {
      await fake.close();
    }
  });
});

describe('delivery through SMTP and HTTP/2 providers', () => {
  let smtp: SmtpFake;
  let apns: Http2Fake;
  beforeAll(async () => {
    smtp = await startSmtpFake({ auth: { user: 'mailer', password: 'pw' } });
    apns = await startHttp2Fake(() => ({ status: 200, headers: { 'apns-id': 'apns-uuid-1' } }));
  });
  afterAll(async () => {
    await smtp?.close();
    await apns?.close();
  });

  it('nodemailer: the mail the SMTP server receives carries the rendered subject, html and text, and the email overrides', async () => {
    await createIntegration(server, {
      providerId: 'nodemailer',
      identifier: 'smtp-e2e',
      credentials: { host: '127.0.0.1', port: String(smtp.port), user: 'mailer', password: 'pw', from: FROM, senderName: 'Herald Mail' },
    });
    const delivery = await triggerAndSettle(server, {
      name: 'mail',
      to: SUBSCRIBER.subscriberId,
      payload: PAYLOAD,
      overrides: {
        email: {
          integrationIdentifier: 'smtp-e2e',
          replyTo: 'support@herald.test',
          cc: ['cc@example.com'],
          bcc: 'audit@example.com',
          attachments: [{ name: 'invoice.txt', file: Buffer.from('invoice o-42').toString('base64'), mime: 'text/plain' }],
        },
      },
    });

    expect(smtp.mails).toHaveLength(1);
    const [{ envelope, parsed }] = smtp.mails;
    expect(envelope).toEqual({ from: FROM, to: [SUBSCRIBER.email, 'cc@example.com', 'audit@example.com'] });
    expect(parsed.from?.value).toEqual([{ address: FROM, name: 'Herald Mail' }]);
    expect(parsed.to && !Array.isArray(parsed.to) ? parsed.to.value : undefined).toEqual([{ address: SUBSCRIBER.email, name: '' }]);
    expect(parsed.cc && !Array.isArray(parsed.cc) ? parsed.cc.text : undefined).toBe('cc@example.com');
    expect(parsed.replyTo?.text).toBe('support@herald.test');
    expect(parsed.subject).toBe(SUBJECT);
    expect(String(parsed.html).trim()).toBe(HTML);
    expect(parsed.text?.trim()).toBe(TEXT);
    expect(parsed.attachments.map((attachment) => [attachment.filename, attachment.contentType, attachment.content.toString()])).toEqual([
      ['invoice.txt', 'text/plain', 'invoice o-42'],
    ]);
    expectSent(delivery, 'nodemailer', { message: emailMessage, raw: expect.stringMatching(/^250 /) as unknown as string });
  });

  it('apns: one HTTP/2 POST per device token with the provider token, topic and alert', async () => {
    await createIntegration(server, {
      providerId: 'apns',
      identifier: 'apns-e2e',
      credentials: { secretKey: p8, apiKey: 'KEY123', projectName: 'TEAM456', applicationId: 'com.herald.app', baseUrl: apns.url },
    });
    await setChannelCredentials(server, SUBSCRIBER.subscriberId, { providerId: 'apns', integrationIdentifier: 'apns-e2e', credentials: { deviceTokens: ['a1b2'] } });
    const delivery = await triggerAndSettle(server, { name: 'buzz', to: SUBSCRIBER.subscriberId, payload: PAYLOAD, overrides: { integrationIdentifier: 'apns-e2e' } });

    expect(apns.requests).toHaveLength(1);
    const [request] = apns.requests;
    expect(request.headers).toMatchObject({
      ':method': 'POST',
      ':path': '/3/device/a1b2',
      'apns-topic': 'com.herald.app',
      'apns-push-type': 'alert',
    });
    expect(String(request.headers.authorization)).toMatch(/^bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    expect(JSON.parse(request.body)).toEqual({ orderId: 'o-42', aps: { alert: { title: PUSH_TITLE, body: PUSH_BODY } } });
    expectSent(delivery, 'apns', {
      message: pushMessage(['a1b2']),
      raw: JSON.stringify({ id: 'apns-uuid-1', tokenResults: [{ token: 'a1b2', ok: true }] }),
    });
  });

  it('passes only provider-specific overrides to the vendor, never the overrides.email block', async () => {
    const fake = await startHttpFake(() => ({ status: 202, body: '' }));
    try {
      await createIntegration(server, { providerId: 'sendgrid', identifier: 'sendgrid-overrides', credentials: { apiKey: 'SG.key', from: FROM, baseUrl: fake.url } });
      const delivery = await triggerAndSettle(server, {
        name: 'mail',
        to: SUBSCRIBER.subscriberId,
        payload: PAYLOAD,
        overrides: {
          email: { integrationIdentifier: 'sendgrid-overrides', replyTo: 'support@herald.test', text: 'Plain text from overrides' },
          sendgrid: { categories: ['orders'] },
          providers: { sendgrid: { ip_pool_name: 'transactional' } },
          steps: { mail: { providers: { sendgrid: { custom_args: { step: 'mail' } } } } },
          mailgun: { ignored: true },
        },
      });
      const body = json(fake.requests[0]);
      expect(body).toEqual({
        personalizations: [{ to: [{ email: SUBSCRIBER.email }] }],
        from: { email: FROM },
        reply_to: { email: 'support@herald.test' },
        subject: SUBJECT,
        content: [{ type: 'text/plain', value: 'Plain text from overrides' }, { type: 'text/html', value: HTML }],
        categories: ['orders'],
        ip_pool_name: 'transactional',
        custom_args: { step: 'mail' },
      });
      expect(delivery.messages[0]).toMatchObject({ status: 'sent', providerId: 'sendgrid' });
    } finally {
      await fake.close();
    }
  });
});
