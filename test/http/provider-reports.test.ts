import { createHmac, createSign, generateKeyPairSync, randomBytes, randomUUID, sign as ecSign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventWebhook } from '@sendgrid/eventwebhook';
import Validator from 'sns-payload-validator';
import { Webhook as SvixWebhook } from 'svix';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { SnsHttpGateway } from '../../src/providers/reports/sns.js';
import { startHttpFake, type HttpFake, type RecordedRequest } from '../fakes/http-fake.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { createWorkflow } from '../worker/engine-helpers.js';
import { createIntegration, createSubscriber, deliveryEnv, triggerAndSettle } from '../worker/delivery/delivery-helpers.js';

/**
 * Provider delivery reports over real HTTP against a real Herald (either test mode): a message is sent through the
 * vendor's fake so a real vendor message id exists, then a report is posted, signed exactly as the vendor signs it.
 * Where the vendor publishes a verifier (@sendgrid/eventwebhook, twilio's validateRequest, svix, and
 * sns-payload-validator for SNS), the test first proves its own signing passes that verifier.
 */

const FROM = 'noreply@herald.test';
const SUBSCRIBER = { subscriberId: 'rita-reports', firstName: 'Rita', email: 'rita@example.com', phone: '+15550002222' };

// SendGrid: an ECDSA P-256 key pair; Herald holds the public half (base64 DER), as SendGrid's settings page shows it.
const sendgridKeys = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const SENDGRID_PUBLIC_KEY = sendgridKeys.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
const MAILGUN_SIGNING_KEY = 'key-mailgun-webhook-signing-0123456789';
const POSTMARK_PASSWORD = 'postmark-basic-password-42';
const RESEND_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const TWILIO_TOKEN = 'twilio-auth-token-0123456789abcdef';
const TOPIC_ARN = 'arn:aws:sns:us-east-1:123456789012:herald-ses-events';
const SNS_CERT_URL = 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem';
const SNS_CERT = readFileSync(join(__dirname, '../fakes/sns-signing-cert.pem'), 'utf8');
const SNS_KEY = readFileSync(join(__dirname, '../fakes/sns-signing-key.pem'), 'utf8');
const otherRsaKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;

let server: TestServer;
let fake: HttpFake;
let sent = 0;

/** Each send gets the vendor's answer with a new vendor message id. */
function vendorAnswer(request: RecordedRequest) {
  sent += 1;
  if (request.path === '/v3/mail/send') return { status: 202, headers: { 'x-message-id': `sgX${sent}Id` }, body: '' };
  if (request.path.endsWith('/messages') && request.path.startsWith('/v3/')) return { body: { id: `<mg${sent}.2026@mg.herald.test>`, message: 'Queued. Thank you.' } };
  if (request.path === '/email') return { body: { MessageID: `pm-${sent}-${randomUUID()}`, SubmittedAt: new Date().toISOString(), ErrorCode: 0, Message: 'OK' } };
  if (request.path === '/emails') return { body: { id: `re-${randomUUID()}` } };
  if (request.path === '/v2/email/outbound-emails') return { body: { MessageId: `0100018c-ses-${sent}-${randomUUID()}` } };
  if (request.path.includes('/Messages.json')) return { status: 201, body: { sid: `SM${randomBytes(16).toString('hex')}`, date_created: new Date().toUTCString() } };
  return { status: 404, body: {} };
}

interface Integration {
  _id: string;
  _organizationId: string;
  _environmentId: string;
  identifier: string;
}

const integrations: Record<string, Integration> = {};

beforeAll(async () => {
  server = await startTestServer({ worker: true, env: deliveryEnv() });
  fake = await startHttpFake(vendorAnswer);
  await createSubscriber(server, SUBSCRIBER);
  await createWorkflow(server, { workflowId: 'mail', steps: [{ name: 'mail', type: 'email', controlValues: { subject: 'Hello {{ subscriber.firstName }}', body: '<p>Hi</p>' } }] });
  await createWorkflow(server, { workflowId: 'text', steps: [{ name: 'text', type: 'sms', controlValues: { body: 'Hi {{ subscriber.firstName }}' } }] });
  const specs: Array<[string, string, Record<string, unknown>, Record<string, unknown>]> = [
    ['sendgrid', 'email', { apiKey: 'SG.key', from: FROM }, { inboundWebhookEnabled: true, inboundWebhookSigningKey: SENDGRID_PUBLIC_KEY }],
    ['mailgun', 'email', { apiKey: 'mg-key', domain: 'mg.herald.test', from: FROM }, { inboundWebhookEnabled: true, inboundWebhookSigningKey: MAILGUN_SIGNING_KEY }],
    ['postmark', 'email', { apiKey: 'pm-token', from: FROM }, { inboundWebhookEnabled: true, inboundWebhookSigningKey: POSTMARK_PASSWORD }],
    ['resend', 'email', { apiKey: 're_key', from: FROM }, { inboundWebhookEnabled: true, inboundWebhookSigningKey: RESEND_SECRET }],
    ['ses', 'email', { apiKey: 'AKIDEXAMPLE', secretKey: 'secret', region: 'us-east-1', from: FROM }, { inboundWebhookEnabled: true, inboundWebhookSigningKey: TOPIC_ARN }],
    ['twilio', 'sms', { accountSid: 'AC123', token: TWILIO_TOKEN, from: '+15550009999' }, { inboundWebhookEnabled: true }],
  ];
  for (const [providerId, channel, credentials, configurations] of specs) {
    integrations[providerId] = await createIntegration(server, {
      providerId,
      channel,
      identifier: `${providerId}-reports`,
      credentials: { ...credentials, baseUrl: fake.url },
      configurations,
    });
  }
  // Tests cannot reach AWS: the SNS certificate is put in Herald's certificate cache, under an SNS URL (still checked).
  (server.deps.deliveryReports.sns as SnsHttpGateway).remember(SNS_CERT_URL, SNS_CERT);
});

afterAll(async () => {
  await server?.close();
  await fake?.close();
});

interface Sent {
  transactionId: string;
  message: any;
  notificationId: string;
}

/** Triggers one message through the vendor's integration and returns it with its vendor id (`identifier`). */
async function sendThrough(providerId: string): Promise<Sent> {
  const channel = providerId === 'twilio' ? 'sms' : 'email';
  const delivery = await triggerAndSettle(server, {
    name: channel === 'sms' ? 'text' : 'mail',
    to: SUBSCRIBER.subscriberId,
    payload: {},
    overrides: { [channel]: { integrationIdentifier: integrations[providerId].identifier } },
  });
  expect(delivery.messages).toHaveLength(1);
  const [message] = delivery.messages;
  expect(message).toMatchObject({ status: 'sent', providerId });
  expect(message.identifier, 'the vendor message id is stored at send time').toEqual(expect.any(String));
  return { transactionId: delivery.transactionId, message, notificationId: delivery.event._id };
}

function reportPath(integration: Integration, channel: string, overrides: { organizationId?: string; environmentId?: string; integrationId?: string } = {}): string {
  return (
    `/v1/webhooks/organizations/${overrides.organizationId ?? integration._organizationId}` +
    `/environments/${overrides.environmentId ?? integration._environmentId}/${channel}/${overrides.integrationId ?? integration._id}`
  );
}

interface SignedReport {
  body: string;
  headers: Record<string, string>;
}

async function post(path: string, report: SignedReport) {
  return server.request('POST', path, { key: null, rawBody: report.body, headers: report.headers });
}

/** The message and its step's execution details, as the API returns them. */
async function stateOf(sentMessage: Sent): Promise<{ message: any; details: any[] }> {
  const messages = await server.request('GET', `/v1/messages?transactionId=${encodeURIComponent(sentMessage.transactionId)}`);
  expect(messages.status, messages.text).toBe(200);
  const event = await server.request('GET', `/v1/notifications/${sentMessage.notificationId}`);
  expect(event.status, event.text).toBe(200);
  return { message: messages.body.data[0], details: event.body.data.jobs.at(-1).executionDetails };
}

const webhookDetails = (details: any[]) => details.filter((detail) => detail.source === 'Webhook');

/** A report with a wrong or missing signature is a 401 in the error shape and changes nothing. */
async function expectRejected(target: Sent, path: string, report: SignedReport, status = 401): Promise<void> {
  const before = await stateOf(target);
  const response = await post(path, report);
  expect(response.status, response.text).toBe(status);
  expect(response.body).toMatchObject({ statusCode: status, path, error: expect.any(String), message: expect.anything() });
  const after = await stateOf(target);
  expect(after.message).toEqual(before.message);
  expect(after.details).toEqual(before.details);
}

// ---- vendor signing, written from each vendor's documentation -------------------------------------------------

function sendgridSigned(events: unknown[], key: KeyObject = sendgridKeys.privateKey): SignedReport {
  const body = JSON.stringify(events);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = ecSign('sha256', Buffer.from(timestamp + body), key).toString('base64');
  return {
    body,
    headers: { 'content-type': 'application/json', 'x-twilio-email-event-webhook-signature': signature, 'x-twilio-email-event-webhook-timestamp': timestamp },
  };
}

function mailgunSigned(eventData: Record<string, unknown>, key = MAILGUN_SIGNING_KEY): SignedReport {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const token = randomBytes(25).toString('hex');
  const signature = createHmac('sha256', key).update(timestamp + token).digest('hex');
  return { body: JSON.stringify({ signature: { timestamp, token, signature }, 'event-data': eventData }), headers: { 'content-type': 'application/json' } };
}

function postmarkSigned(event: Record<string, unknown>, password = POSTMARK_PASSWORD): SignedReport {
  return {
    body: JSON.stringify(event),
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`herald:${password}`).toString('base64')}` },
  };
}

function resendSigned(event: Record<string, unknown>, secret = RESEND_SECRET): SignedReport {
  const body = JSON.stringify(event);
  const id = `msg_${randomBytes(12).toString('hex')}`;
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64')).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { body, headers: { 'content-type': 'application/json', 'svix-id': id, 'svix-timestamp': timestamp, 'svix-signature': `v1,${signature}` } };
}

/** An SNS message signed as SNS signs: `name\nvalue\n` of the type's fields in order, RSA with SHA1 (v1) or SHA256 (v2). */
function snsSigned(fields: Record<string, string>, options: { version?: '1' | '2'; key?: string | KeyObject; certUrl?: string } = {}): SignedReport & { message: Record<string, string> } {
  const version = options.version ?? '2';
  const message: Record<string, string> = { ...fields, SignatureVersion: version, SigningCertURL: options.certUrl ?? SNS_CERT_URL };
  const names = message.Type === 'Notification' ? ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'] : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
  const signer = createSign(version === '1' ? 'RSA-SHA1' : 'RSA-SHA256');
  signer.update(names.filter((name) => name in message).map((name) => `${name}\n${message[name]}\n`).join(''));
  message.Signature = signer.sign(options.key ?? SNS_KEY, 'base64');
  return { message, body: JSON.stringify(message), headers: { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': message.Type } };
}

function sesNotification(event: Record<string, unknown>, options: Parameters<typeof snsSigned>[1] & { topicArn?: string } = {}) {
  return snsSigned(
    {
      Type: 'Notification',
      MessageId: randomUUID(),
      TopicArn: options.topicArn ?? TOPIC_ARN,
      Message: JSON.stringify(event),
      Timestamp: new Date().toISOString(),
      UnsubscribeURL: 'https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=x',
    },
    options,
  );
}

function twilioSigned(path: string, params: Record<string, string>, token = TWILIO_TOKEN): SignedReport & { url: string; signature: string } {
  const url = server.url + path;
  const data = url + Object.keys(params).sort().map((name) => name + params[name]).join('');
  const signature = createHmac('sha1', token).update(data).digest('base64');
  return { url, signature, body: new URLSearchParams(params).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature } };
}

const twilioStatus = (sid: string, status: string, extra: Record<string, string> = {}) => ({
  AccountSid: 'AC123',
  ApiVersion: '2010-04-01',
  From: '+15550009999',
  MessageSid: sid,
  MessageStatus: status,
  SmsSid: sid,
  SmsStatus: status,
  To: SUBSCRIBER.phone,
  ...extra,
});

// ---- per vendor --------------------------------------------------------------------------------------------------

describe('SendGrid Event Webhook (ECDSA)', () => {
  let target: Sent;
  let path: string;
  beforeAll(async () => {
    target = await sendThrough('sendgrid');
    path = reportPath(integrations.sendgrid, 'email');
  });
  const event = (name: string, extra: Record<string, unknown> = {}) => ({
    email: SUBSCRIBER.email,
    timestamp: Math.floor(Date.parse('2026-11-20T10:00:00Z') / 1000),
    event: name,
    sg_event_id: randomBytes(16).toString('base64url'),
    // SendGrid's sg_message_id is the send's X-Message-Id plus a filter suffix.
    sg_message_id: `${target.message.identifier}.filterdrecv-5645d9c87f-6r2ch-1-5F5FC76C-9.0`,
    ...extra,
  });

  it('signs as SendGrid does: @sendgrid/eventwebhook verifies the test signature', () => {
    const signed = sendgridSigned([event('delivered')]);
    const verifier = new EventWebhook();
    const key = verifier.convertPublicKeyToECDSA(SENDGRID_PUBLIC_KEY);
    expect(verifier.verifySignature(key, signed.body, signed.headers['x-twilio-email-event-webhook-signature'], signed.headers['x-twilio-email-event-webhook-timestamp'])).toBe(true);
    const other = sendgridSigned([event('delivered')], generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey);
    expect(verifier.verifySignature(key, other.body, other.headers['x-twilio-email-event-webhook-signature'], other.headers['x-twilio-email-event-webhook-timestamp'])).toBe(false);
  });

  it('a wrongly signed, an unsigned and a tampered report change nothing', async () => {
    const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
    await expectRejected(target, path, sendgridSigned([event('bounce', { type: 'bounce', reason: '550 no such user' })], other));
    const unsigned = sendgridSigned([event('bounce')]);
    await expectRejected(target, path, { body: unsigned.body, headers: { 'content-type': 'application/json' } });
    const tampered = sendgridSigned([event('delivered')]);
    await expectRejected(target, path, { ...tampered, body: tampered.body.replace('delivered', 'bounce') });
  });

  it('delivered adds to deliveredAt and records a Webhook execution detail with the raw event; a redelivery changes nothing', async () => {
    const before = await stateOf(target);
    const delivered = event('delivered', { response: '250 OK' });
    const signed = sendgridSigned([event('processed'), delivered]);
    const response = await post(path, signed);
    expect(response.status, response.text).toBe(200);
    expect(response.body.data).toEqual({
      subscriptionConfirmed: false,
      reports: [{ eventId: delivered.sg_event_id, state: 'delivered', vendorEvent: 'delivered', outcome: 'recorded', messageId: target.message._id }],
    });
    const after = await stateOf(target);
    expect(after.message.status).toBe('sent');
    expect(after.message.providerStatus).toBe('delivered');
    expect(after.message.deliveredAt).toEqual([...before.message.deliveredAt, '2026-11-20T10:00:00.000Z']);
    const [detail] = webhookDetails(after.details);
    expect(detail).toMatchObject({ source: 'Webhook', status: 'Success', providerId: 'sendgrid', isRetry: false, isTest: false });
    expect(detail.detail).toBe('Delivered (SendGrid report: delivered): 250 OK');
    expect(JSON.parse(detail.raw)).toEqual(delivered);

    const again = await post(path, signed);
    expect(again.status, again.text).toBe(200);
    expect(again.body.data.reports[0].outcome).toBe('duplicate');
    expect(await stateOf(target)).toEqual(after);
  });

  it('bounce sets the status to error with the reason; a later open keeps the bounce as the provider status', async () => {
    const response = await post(path, sendgridSigned([event('bounce', { type: 'bounce', reason: '550 5.1.1 no such user' })]));
    expect(response.status, response.text).toBe(200);
    const { message, details } = await stateOf(target);
    expect(message).toMatchObject({ status: 'error', providerStatus: 'bounced', errorId: 'provider_bounced', errorText: 'Bounced (bounce/bounce): 550 5.1.1 no such user' });
    expect(webhookDetails(details).at(-1)).toMatchObject({ status: 'Failed', detail: 'Bounced (SendGrid report: bounce/bounce): 550 5.1.1 no such user' });
    await post(path, sendgridSigned([event('open')]));
    const later = await stateOf(target);
    expect(later.message).toMatchObject({ status: 'error', providerStatus: 'bounced' });
    expect(webhookDetails(later.details).at(-1)).toMatchObject({ status: 'ReadConfirmation', detail: 'Opened (SendGrid report: open)' });
  });
});

describe('Mailgun webhooks (HMAC)', () => {
  let target: Sent;
  let path: string;
  beforeAll(async () => {
    target = await sendThrough('mailgun');
    path = reportPath(integrations.mailgun, 'email');
  });
  const eventData = (name: string, extra: Record<string, unknown> = {}) => ({
    id: randomBytes(11).toString('base64url'),
    event: name,
    timestamp: 1763632800.123,
    recipient: SUBSCRIBER.email,
    // Mailgun's events carry the id without the angle brackets of the send's answer.
    message: { headers: { 'message-id': String(target.message.identifier).replace(/^<|>$/g, '') } },
    ...extra,
  });

  it('a report signed with another key, or without a signature, changes nothing', async () => {
    await expectRejected(target, path, mailgunSigned(eventData('delivered'), 'not-the-signing-key'));
    await expectRejected(target, path, { body: JSON.stringify({ 'event-data': eventData('delivered') }), headers: { 'content-type': 'application/json' } });
  });

  it('delivered, then a permanent failure (bounce), each recorded once', async () => {
    const before = await stateOf(target);
    const delivered = mailgunSigned(eventData('delivered', { 'delivery-status': { code: 250, message: 'OK' } }));
    const response = await post(path, delivered);
    expect(response.status, response.text).toBe(200);
    expect(response.body.data.reports).toMatchObject([{ state: 'delivered', outcome: 'recorded', messageId: target.message._id }]);
    const after = await stateOf(target);
    expect(after.message.deliveredAt).toEqual([...before.message.deliveredAt, new Date(1763632800123).toISOString()]);
    expect(webhookDetails(after.details)).toMatchObject([{ status: 'Success', source: 'Webhook', detail: 'Delivered (Mailgun report: delivered): OK' }]);
    expect((await post(path, delivered)).body.data.reports[0].outcome).toBe('duplicate');

    // A temporary failure is Mailgun still retrying: nothing to record.
    const temporary = await post(path, mailgunSigned(eventData('failed', { severity: 'temporary' })));
    expect(temporary.body.data.reports).toEqual([]);
    const bounced = await post(path, mailgunSigned(eventData('failed', { severity: 'permanent', 'delivery-status': { code: 550, description: 'mailbox unavailable' } })));
    expect(bounced.body.data.reports).toMatchObject([{ state: 'bounced', outcome: 'recorded' }]);
    const final = await stateOf(target);
    expect(final.message).toMatchObject({ status: 'error', providerStatus: 'bounced', errorText: 'Bounced (failed/permanent): mailbox unavailable' });
    expect(webhookDetails(final.details)).toHaveLength(2);
  });
});

describe('Postmark webhooks (HTTP Basic credentials)', () => {
  let target: Sent;
  let path: string;
  beforeAll(async () => {
    target = await sendThrough('postmark');
    path = reportPath(integrations.postmark, 'email');
  });
  const delivery = () => ({ RecordType: 'Delivery', ServerID: 23, MessageStream: 'outbound', MessageID: target.message.identifier, Recipient: SUBSCRIBER.email, DeliveredAt: '2026-11-20T11:00:00Z', Details: 'smtp;250 2.0.0 OK' });

  it('wrong or missing credentials change nothing', async () => {
    await expectRejected(target, path, postmarkSigned(delivery(), 'guess'));
    await expectRejected(target, path, { body: JSON.stringify(delivery()), headers: { 'content-type': 'application/json' } });
  });

  it('Delivery adds to deliveredAt; SpamComplaint makes the message a warning; a redelivery changes nothing', async () => {
    const before = await stateOf(target);
    const signed = postmarkSigned(delivery());
    expect((await post(path, signed)).body.data.reports).toMatchObject([{ state: 'delivered', outcome: 'recorded' }]);
    expect((await post(path, signed)).body.data.reports).toMatchObject([{ outcome: 'duplicate' }]);
    const complaint = await post(path, postmarkSigned({ RecordType: 'SpamComplaint', ID: 42, Type: 'SpamComplaint', MessageID: target.message.identifier, BouncedAt: '2026-11-20T12:00:00Z', Description: 'The subscriber explicitly marked this message as spam.' }));
    expect(complaint.status, complaint.text).toBe(200);
    const after = await stateOf(target);
    expect(after.message.deliveredAt).toEqual([...before.message.deliveredAt, '2026-11-20T11:00:00.000Z']);
    expect(after.message).toMatchObject({ status: 'warning', providerStatus: 'complained', errorId: 'provider_complaint' });
    expect(webhookDetails(after.details).map((detail: any) => detail.status)).toEqual(['Success', 'Warning']);
    expect(webhookDetails(after.details)[1].detail).toMatch(/^Complaint \(Postmark report: SpamComplaint\)/);
  });
});

describe('Resend webhooks (Svix)', () => {
  let target: Sent;
  let path: string;
  beforeAll(async () => {
    target = await sendThrough('resend');
    path = reportPath(integrations.resend, 'email');
  });
  const event = (type: string) => ({ type, created_at: '2026-11-20T12:30:00.000Z', data: { email_id: target.message.identifier, to: [SUBSCRIBER.email], subject: 'Hello Rita' } });

  it('signs as Svix does: the svix package verifies the test signature', () => {
    const signed = resendSigned(event('email.delivered'));
    expect(new SvixWebhook(RESEND_SECRET).verify(signed.body, signed.headers)).toEqual(JSON.parse(signed.body));
    const other = resendSigned(event('email.delivered'), `whsec_${randomBytes(24).toString('base64')}`);
    expect(() => new SvixWebhook(RESEND_SECRET).verify(other.body, other.headers)).toThrow();
  });

  it('another secret, a stale timestamp or no headers change nothing', async () => {
    await expectRejected(target, path, resendSigned(event('email.bounced'), `whsec_${randomBytes(24).toString('base64')}`));
    const stale = resendSigned(event('email.bounced'));
    const oldTimestamp = String(Math.floor(Date.now() / 1000) - 3600);
    const oldSignature = createHmac('sha256', Buffer.from(RESEND_SECRET.slice(6), 'base64')).update(`${stale.headers['svix-id']}.${oldTimestamp}.${stale.body}`).digest('base64');
    await expectRejected(target, path, { body: stale.body, headers: { ...stale.headers, 'svix-timestamp': oldTimestamp, 'svix-signature': `v1,${oldSignature}` } });
    await expectRejected(target, path, { body: stale.body, headers: { 'content-type': 'application/json' } });
  });

  it('delivered then opened: deliveredAt grows, the open is a ReadConfirmation; the svix-id makes a redelivery a no-op', async () => {
    const before = await stateOf(target);
    const delivered = resendSigned(event('email.delivered'));
    expect((await post(path, delivered)).body.data.reports).toMatchObject([{ eventId: delivered.headers['svix-id'], outcome: 'recorded' }]);
    expect((await post(path, delivered)).body.data.reports).toMatchObject([{ outcome: 'duplicate' }]);
    expect((await post(path, resendSigned(event('email.opened')))).status).toBe(200);
    const after = await stateOf(target);
    expect(after.message.deliveredAt).toEqual([...before.message.deliveredAt, '2026-11-20T12:30:00.000Z']);
    expect(after.message).toMatchObject({ status: 'sent', providerStatus: 'opened' });
    expect(webhookDetails(after.details).map((detail: any) => [detail.status, detail.detail])).toEqual([
      ['Success', 'Delivered (Resend report: email.delivered)'],
      ['ReadConfirmation', 'Opened (Resend report: email.opened)'],
    ]);
  });
});

describe('Amazon SES through SNS (message signatures)', () => {
  let target: Sent;
  let path: string;
  beforeAll(async () => {
    target = await sendThrough('ses');
    path = reportPath(integrations.ses, 'email');
  });
  const delivery = () => ({
    eventType: 'Delivery',
    mail: { timestamp: '2026-11-20T13:00:00.000Z', messageId: target.message.identifier, source: FROM, destination: [SUBSCRIBER.email] },
    delivery: { timestamp: '2026-11-20T13:00:01.000Z', recipients: [SUBSCRIBER.email], smtpResponse: '250 ok' },
  });

  it('signs as SNS does: sns-payload-validator verifies the test signatures (v1 and v2)', async () => {
    const validator = new Validator();
    // Its public (untyped) certificate cache, pre-seeded: the test cannot reach AWS either.
    (validator as unknown as { certCache: { set(url: string, pem: string): void } }).certCache.set(SNS_CERT_URL, SNS_CERT);
    for (const version of ['1', '2'] as const) {
      const { message } = sesNotification(delivery(), { version });
      await expect(validator.validate(message as never)).resolves.toEqual(message);
    }
    const { message: forged } = sesNotification(delivery(), { key: otherRsaKey });
    await expect(validator.validate(forged as never)).rejects.toThrow('Invalid Signature');
  });

  it('a forged signature, another topic, or a certificate URL off the SNS hosts changes nothing', async () => {
    await expectRejected(target, path, sesNotification(delivery(), { key: otherRsaKey }));
    await expectRejected(target, path, sesNotification(delivery(), { topicArn: 'arn:aws:sns:us-east-1:999999999999:someone-else' }));
    for (const certUrl of [
      'https://sns.us-east-1.amazonaws.com.attacker.example/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem',
      'http://sns.us-east-1.amazonaws.com/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem',
      `${fake.url}/cert.pem`,
    ]) {
      await expectRejected(target, path, sesNotification(delivery(), { certUrl }));
    }
    expect(fake.requests.filter((request) => request.path.endsWith('.pem'))).toEqual([]);
  });

  it('Delivery (v1 and v2 signatures) and a permanent Bounce map onto the message; the SNS MessageId dedupes', async () => {
    const before = await stateOf(target);
    const signed = sesNotification(delivery(), { version: '1' });
    const response = await post(path, signed);
    expect(response.status, response.text).toBe(200);
    expect(response.body.data.reports).toEqual([{ eventId: signed.message.MessageId, state: 'delivered', vendorEvent: 'Delivery', outcome: 'recorded', messageId: target.message._id }]);
    expect((await post(path, signed)).body.data.reports[0].outcome).toBe('duplicate');
    const bounce = {
      eventType: 'Bounce',
      mail: { messageId: target.message.identifier },
      bounce: { bounceType: 'Permanent', bounceSubType: 'General', timestamp: '2026-11-20T13:05:00.000Z', bouncedRecipients: [{ emailAddress: SUBSCRIBER.email, diagnosticCode: 'smtp; 550 user unknown' }] },
    };
    expect((await post(path, sesNotification(bounce, { version: '2' }))).status).toBe(200);
    const after = await stateOf(target);
    expect(after.message.deliveredAt).toEqual([...before.message.deliveredAt, '2026-11-20T13:00:01.000Z']);
    expect(after.message).toMatchObject({ status: 'error', providerStatus: 'bounced', errorText: 'Bounced (Bounce): Permanent General smtp; 550 user unknown' });
    const details = webhookDetails(after.details);
    expect(details.map((detail: any) => detail.status)).toEqual(['Success', 'Failed']);
    expect(JSON.parse(details[0].raw)).toEqual(signed.message);
  });

  it('a signed SubscriptionConfirmation is confirmed at its SNS SubscribeURL; one pointing elsewhere is refused', async () => {
    const sns = server.deps.deliveryReports.sns;
    const confirm = vi.spyOn(sns, 'confirm');
    try {
      confirm.mockResolvedValueOnce(undefined);
      const subscribeUrl = `https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${encodeURIComponent(TOPIC_ARN)}&Token=abc`;
      const confirmation = (url: string) =>
        snsSigned({ Type: 'SubscriptionConfirmation', MessageId: randomUUID(), Token: 'abc', TopicArn: TOPIC_ARN, Message: 'You have chosen to subscribe...', SubscribeURL: url, Timestamp: new Date().toISOString() });
      const response = await post(path, confirmation(subscribeUrl));
      expect(response.status, response.text).toBe(200);
      expect(response.body.data).toEqual({ subscriptionConfirmed: true, reports: [] });
      expect(confirm).toHaveBeenCalledWith(subscribeUrl);

      // The real gateway refuses a SubscribeURL off the SNS hosts before any request.
      const elsewhere = await post(path, confirmation(`${fake.url}/confirm`));
      expect(elsewhere.status, elsewhere.text).toBe(401);
      expect(fake.requests.filter((request) => request.path === '/confirm')).toEqual([]);
    } finally {
      confirm.mockRestore();
    }
  });
});

describe('Twilio status callbacks (X-Twilio-Signature)', () => {
  let target: Sent;
  let path: string;
  beforeAll(async () => {
    target = await sendThrough('twilio');
    path = reportPath(integrations.twilio, 'sms');
  });

  it("signs as Twilio does: twilio's validateRequest accepts the test signature", () => {
    const params = twilioStatus(target.message.identifier, 'delivered');
    const signed = twilioSigned(path, params);
    expect(twilio.validateRequest(TWILIO_TOKEN, signed.signature, signed.url, params)).toBe(true);
    expect(twilio.validateRequest('another-token', signed.signature, signed.url, params)).toBe(false);
  });

  it('a callback signed with another token, for another URL, or unsigned changes nothing', async () => {
    const params = twilioStatus(target.message.identifier, 'undelivered', { ErrorCode: '30003' });
    await expectRejected(target, path, twilioSigned(path, params, 'another-token'));
    const otherUrl = twilioSigned(`${path}?x=1`, params);
    await expectRejected(target, path, otherUrl);
    const { body } = twilioSigned(path, params);
    await expectRejected(target, path, { body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  });

  it('delivered, then undelivered with an error code; sent/queued callbacks change nothing', async () => {
    const before = await stateOf(target);
    const queued = await post(path, twilioSigned(path, twilioStatus(target.message.identifier, 'sent')));
    expect(queued.body.data.reports).toEqual([]);
    const delivered = twilioSigned(path, twilioStatus(target.message.identifier, 'delivered'));
    const response = await post(path, delivered);
    expect(response.status, response.text).toBe(200);
    expect(response.body.data.reports).toMatchObject([{ state: 'delivered', outcome: 'recorded', messageId: target.message._id }]);
    expect((await post(path, delivered)).body.data.reports[0].outcome).toBe('duplicate');
    const middle = await stateOf(target);
    expect(middle.message.deliveredAt).toHaveLength(before.message.deliveredAt.length + 1);
    expect(webhookDetails(middle.details)).toMatchObject([{ status: 'Success', source: 'Webhook', providerId: 'twilio', raw: delivered.body }]);

    await post(path, twilioSigned(path, twilioStatus(target.message.identifier, 'undelivered', { ErrorCode: '30003', ErrorMessage: 'Unreachable' })));
    const after = await stateOf(target);
    expect(after.message).toMatchObject({ status: 'error', providerStatus: 'failed', errorId: 'provider_failed', errorText: 'Delivery failed (undelivered): error 30003 Unreachable' });
    expect(webhookDetails(after.details).at(-1)).toMatchObject({ status: 'Failed', detail: 'Failed (Twilio report: undelivered): error 30003 Unreachable' });
  });
});

// ---- scope, configuration and shape ------------------------------------------------------------------------------

describe('reports outside their scope', () => {
  let target: Sent;
  beforeAll(async () => {
    target = await sendThrough('sendgrid');
  });
  const delivered = () => [{ event: 'delivered', sg_event_id: randomUUID(), sg_message_id: `${target.message.identifier}.filter0001`, timestamp: 1763632800 }];

  it('an unknown integration, another environment or organization, the other channel, or a malformed id is a 404 changing nothing', async () => {
    const sendgrid = integrations.sendgrid;
    const paths = [
      reportPath(sendgrid, 'email', { integrationId: 'aaaaaaaaaaaaaaaaaaaaaaaa' }),
      reportPath(sendgrid, 'email', { environmentId: server.prodEnvironmentId }),
      reportPath(sendgrid, 'email', { organizationId: 'bbbbbbbbbbbbbbbbbbbbbbbb' }),
      reportPath(sendgrid, 'sms'),
      reportPath(sendgrid, 'email', { integrationId: 'not-an-id' }),
    ];
    for (const path of paths) await expectRejected(target, path, sendgridSigned(delivered()), 404);
    const push = await post(`/v1/webhooks/organizations/${sendgrid._organizationId}/environments/${sendgrid._environmentId}/push/${sendgrid._id}`, sendgridSigned(delivered()));
    // No such route: answered like any unknown path without a key (the auth hook runs before the 404).
    expect([401, 404]).toContain(push.status);
  });

  it('an integration without inbound reports enabled answers 403 and changes nothing', async () => {
    const disabled = await createIntegration(server, {
      providerId: 'sendgrid',
      channel: 'email',
      identifier: 'sendgrid-no-reports',
      credentials: { apiKey: 'SG.other', from: FROM, baseUrl: fake.url },
      configurations: { inboundWebhookEnabled: false, inboundWebhookSigningKey: SENDGRID_PUBLIC_KEY },
    });
    await expectRejected(target, reportPath(disabled, 'email'), sendgridSigned(delivered()), 403);
    const keyless = await createIntegration(server, {
      providerId: 'sendgrid',
      channel: 'email',
      identifier: 'sendgrid-no-key',
      credentials: { apiKey: 'SG.other', from: FROM, baseUrl: fake.url },
      configurations: { inboundWebhookEnabled: true },
    });
    await expectRejected(target, reportPath(keyless, 'email'), sendgridSigned(delivered()), 403);
  });

  it("another environment's integration, correctly signed, cannot touch this environment's message", async () => {
    const response = await server.request('POST', '/v1/integrations', {
      key: server.prodKey,
      body: {
        providerId: 'sendgrid',
        channel: 'email',
        identifier: 'sendgrid-prod',
        active: true,
        check: false,
        credentials: { apiKey: 'SG.prod', from: FROM, baseUrl: fake.url },
        configurations: { inboundWebhookEnabled: true, inboundWebhookSigningKey: SENDGRID_PUBLIC_KEY },
      },
    });
    expect(response.status, response.text).toBe(201);
    const prod = response.body.data;
    const before = await stateOf(target);
    const answer = await post(reportPath(prod, 'email'), sendgridSigned(delivered()));
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.data.reports).toMatchObject([{ outcome: 'unmatched' }]);
    expect(answer.body.data.reports[0].messageId).toBeUndefined();
    expect(await stateOf(target)).toEqual(before);
  });

  it('a body that is not JSON is a 400 after a valid signature, changing nothing', async () => {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const body = 'not json';
    const signature = ecSign('sha256', Buffer.from(timestamp + body), sendgridKeys.privateKey).toString('base64');
    await expectRejected(
      target,
      reportPath(integrations.sendgrid, 'email'),
      { body, headers: { 'content-type': 'application/json', 'x-twilio-email-event-webhook-signature': signature, 'x-twilio-email-event-webhook-timestamp': timestamp } },
      400,
    );
  });

  it("takes the provider id in place of the integration id (Novu's providerOrIntegrationId) when it names one integration", async () => {
    const mailed = await sendThrough('mailgun');
    const mailgun = integrations.mailgun;
    const byProvider = reportPath(mailgun, 'email', { integrationId: 'mailgun' });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const token = randomBytes(25).toString('hex');
    const body = JSON.stringify({
      signature: { timestamp, token, signature: createHmac('sha256', MAILGUN_SIGNING_KEY).update(timestamp + token).digest('hex') },
      'event-data': { id: randomUUID(), event: 'opened', timestamp: 1763632800, message: { headers: { 'message-id': String(mailed.message.identifier).slice(1, -1) } } },
    });
    const response = await post(byProvider, { body, headers: { 'content-type': 'application/json' } });
    expect(response.status, response.text).toBe(200);
    expect(response.body.data.reports).toMatchObject([{ state: 'opened', outcome: 'recorded', messageId: mailed.message._id }]);
    expect((await stateOf(mailed)).message.providerStatus).toBe('opened');
    // Two SendGrid integrations have reports on here (one without a key): the provider id is ambiguous.
    await expectRejected(target, reportPath(integrations.sendgrid, 'email', { integrationId: 'sendgrid' }), sendgridSigned(delivered()), 409);
    await expectRejected(target, reportPath(integrations.sendgrid, 'email', { integrationId: 'postmark' }), sendgridSigned(delivered()), 401);
  });

  it('keeps the signing key encrypted at rest', async () => {
    const row = await server.container.db.selectFrom('integrations').select('configurations').where('id', '=', integrations.mailgun._id).executeTakeFirstOrThrow();
    expect(row.configurations).not.toContain(MAILGUN_SIGNING_KEY);
    const stored = await server.deps.store.integrations.get(server.devEnvironmentId, integrations.mailgun._id);
    expect(stored?.configurations.inboundWebhookSigningKey).toBe(MAILGUN_SIGNING_KEY);
  });

  it('is documented in the OpenAPI document as a public route', async () => {
    const response = await server.request('GET', '/openapi.json');
    const operation = response.body.paths['/v1/webhooks/organizations/{organizationId}/environments/{environmentId}/email/{integrationId}'].post;
    expect(operation.security).toEqual([]);
  });
});

describe('rate limit and HERALD_PUBLIC_URL', () => {
  let limited: TestServer;
  const PUBLIC_URL = 'https://herald.example.com/notify';
  beforeAll(async () => {
    limited = await startTestServer({ env: { HERALD_RATE_LIMIT_PROVIDER_REPORTS: '2', HERALD_RATE_LIMIT_WINDOW_SECONDS: '60', HERALD_PUBLIC_URL: `${PUBLIC_URL}/` } });
  });
  afterAll(async () => {
    await limited?.close();
  });

  it('counts reports per integration: past the limit, 429 with Retry-After before the body is read', async () => {
    const path = (integrationId: string) => `/v1/webhooks/organizations/aaaaaaaaaaaaaaaaaaaaaaaa/environments/${limited.devEnvironmentId}/email/${integrationId}`;
    const send = (integrationId: string) => limited.request('POST', path(integrationId), { key: null, rawBody: '[]', headers: { 'content-type': 'application/json' } });
    const first = await send('cccccccccccccccccccccccc');
    expect(first.status).toBe(404);
    expect(first.headers.get('ratelimit-limit')).toBe('2');
    expect((await send('cccccccccccccccccccccccc')).status).toBe(404);
    const third = await send('cccccccccccccccccccccccc');
    expect(third.status, third.text).toBe(429);
    expect(third.headers.get('retry-after')).toEqual(expect.any(String));
    expect(third.body).toMatchObject({ statusCode: 429, message: 'API rate limit exceeded' });
    // Another integration has its own counter.
    expect((await send('dddddddddddddddddddddddd')).status).toBe(404);
  });

  it('Twilio signatures are checked against HERALD_PUBLIC_URL + path (the URL Twilio calls behind a proxy)', async () => {
    const created = await limited.request('POST', '/v1/integrations', {
      body: { providerId: 'twilio', channel: 'sms', active: true, check: false, credentials: { accountSid: 'AC9', token: TWILIO_TOKEN, from: '+15550001' }, configurations: { inboundWebhookEnabled: true } },
    });
    expect(created.status, created.text).toBe(201);
    const integration = created.body.data;
    const path = reportPath(integration, 'sms');
    const params = twilioStatus('SM0000', 'delivered');
    const signFor = (url: string) => createHmac('sha1', TWILIO_TOKEN).update(url + Object.keys(params).sort().map((name) => name + params[name as keyof typeof params]).join('')).digest('base64');
    const send = (signature: string) =>
      limited.request('POST', path, { key: null, rawBody: new URLSearchParams(params).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature } });
    expect(twilio.validateRequest(TWILIO_TOKEN, signFor(PUBLIC_URL + path), PUBLIC_URL + path, params)).toBe(true);
    const local = await send(signFor(limited.url + path));
    expect(local.status, local.text).toBe(401);
    const viaProxy = await send(signFor(PUBLIC_URL + path));
    expect(viaProxy.status, viaProxy.text).toBe(200);
    // Verified, but no message of this environment has that sid.
    expect(viaProxy.body.data.reports).toEqual([{ eventId: 'SM0000:delivered', state: 'delivered', vendorEvent: 'delivered', outcome: 'unmatched' }]);
  });
});

describe('provider reports announce outbound webhooks', () => {
  it('delivered and bounced reports reach a webhook endpoint, verified, with the message before and after, and count once each on the overview', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const created = await server.request('POST', '/v2/webhooks/endpoints', {
        body: { url: `${receiver.url}/reports`, eventTypes: ['message.delivered', 'message.bounced'] },
      });
      expect(created.status, created.text).toBe(201);
      receiver.secrets.push(created.body.data.secret);
      const target = await sendThrough('sendgrid');
      const path = reportPath(integrations.sendgrid, 'email');
      const event = (name: string, extra: Record<string, unknown> = {}) => ({
        email: SUBSCRIBER.email,
        timestamp: Math.floor(Date.now() / 1000),
        event: name,
        sg_event_id: randomBytes(16).toString('base64url'),
        sg_message_id: `${target.message.identifier}.filter0001`,
        ...extra,
      });
      const outcomes = async () => (await server.request('GET', '/v1/dashboard/overview?range=24h')).body.data.outcomes;
      const before = await outcomes();
      expect((await post(path, sendgridSigned([event('delivered')]))).status).toBe(200);
      // A second delivered report of the same message (another event id) is recorded but not counted twice.
      expect((await post(path, sendgridSigned([event('delivered')]))).status).toBe(200);
      expect((await post(path, sendgridSigned([event('bounce', { type: 'bounce', reason: '550 no such user' })]))).status).toBe(200);
      const after = await outcomes();
      // The overview's delivered and bounced tiles count provider reports, once per message.
      expect({ delivered: after.delivered - before.delivered, bounced: after.bounced - before.bounced }).toEqual({ delivered: 1, bounced: 1 });
      const [delivered] = await receiver.waitFor((webhook) => webhook.body?.type === 'message.delivered', 2);
      const [bounced] = await receiver.waitFor((webhook) => webhook.body?.type === 'message.bounced');
      for (const webhook of [delivered!, bounced!]) {
        expect(webhook.verifiedWith).toContain(0);
        expect(webhook.body.data.object).toMatchObject({ _id: target.message._id, channel: 'email', providerId: 'sendgrid', subscriberId: SUBSCRIBER.subscriberId });
      }
      expect(delivered!.body.data.object.deliveredAt).toHaveLength(delivered!.body.data.previousObject.deliveredAt.length + 1);
      expect(bounced!.body.data.object.status).toBe('error');
      expect(bounced!.body.data.error).toMatchObject({ code: 'bounced' });
      // The endpoint's filter: nothing else was sent to it.
      expect(receiver.received.map((webhook) => webhook.body.type).sort()).toEqual(['message.bounced', 'message.delivered', 'message.delivered']);
    } finally {
      await receiver.close();
    }
  }, 60_000);
});
