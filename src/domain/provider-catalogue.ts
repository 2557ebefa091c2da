import type { DeliveryChannel, IntegrationKind } from './types.js';

/**
 * Every provider id Herald accepts (shared/spec/provider-ids.md), with its channel, its kind and the
 * credential fields an active integration must have. This is the one catalogue; an id outside it is a 400.
 * Whether Herald can actually deliver through a provider is the provider registry's business, not this.
 */
export interface CatalogueEntry {
  id: string;
  kind: IntegrationKind;
  /** Absent for agent-kind providers. `clickatell` serves two channels, so lookups take the channel. */
  channel?: DeliveryChannel;
  requiredCredentials: readonly string[];
}

type Row = [id: string, required: string[]];

const IN_APP: Row[] = [['novu', []]];

const EMAIL: Row[] = [
  ['nodemailer', ['host', 'port', 'from']],
  ['sendgrid', ['apiKey', 'from']],
  ['mailgun', ['apiKey', 'domain', 'from']],
  ['postmark', ['apiKey', 'from']],
  ['resend', ['apiKey', 'from']],
  ['ses', ['apiKey', 'secretKey', 'region', 'from']],
  ['mailjet', ['apiKey', 'secretKey', 'from']],
  ['mandrill', ['apiKey', 'from']],
  ['sendinblue', ['apiKey', 'from']],
  ['sparkpost', ['apiKey', 'from']],
  ['mailersend', ['apiKey', 'from']],
  ['mailtrap', ['apiKey', 'from']],
  ['plunk', ['apiKey', 'from']],
  ['netcore', ['apiKey', 'from']],
  ['infobip-email', ['apiKey', 'baseUrl', 'from']],
  ['outlook365', ['from', 'password']],
  ['braze', ['apiKey', 'baseUrl', 'applicationId']],
  ['emailjs', ['host', 'port', 'from']],
  ['clickatell', ['apiKey']],
  ['anypost', ['apiKey', 'from']],
  ['email-webhook', ['webhookUrl', 'secretKey']],
  ['novu-email', []],
  ['novu-email-agent', []],
];

const SMS: Row[] = [
  ['twilio', ['accountSid', 'token', 'from']],
  ['nexmo', ['apiKey', 'secretKey', 'from']],
  ['plivo', ['accountSid', 'token', 'from']],
  ['sns', ['apiKey', 'secretKey', 'region']],
  ['telnyx', ['apiKey', 'from']],
  ['messagebird', ['accessKey']],
  ['sinch', ['accountSid', 'apiToken', 'from']],
  ['bandwidth', ['user', 'password', 'accountSid', 'from']],
  ['clicksend', ['user', 'apiKey']],
  ['infobip-sms', ['apiKey', 'baseUrl', 'from']],
  ['africas-talking', ['user', 'apiKey', 'from']],
  ['termii', ['apiKey', 'from']],
  ['sendchamp', ['apiKey', 'from']],
  ['gupshup', ['user', 'password']],
  ['firetext', ['apiKey', 'from']],
  ['burst-sms', ['apiKey', 'secretKey']],
  ['bulk-sms', ['apiToken']],
  ['isend-sms', ['apiToken', 'from']],
  ['forty-six-elks', ['user', 'password', 'from']],
  ['kannel', ['host', 'port', 'from']],
  ['maqsam', ['accessKey', 'secretKey', 'from']],
  ['sms77', ['apiKey', 'from']],
  ['sms-central', ['user', 'password', 'from']],
  ['simpletexting', ['apiKey', 'from']],
  ['azure-sms', ['accessKey', 'from']],
  ['ring-central', ['clientId', 'secretKey', 'token', 'from']],
  ['brevo-sms', ['apiKey', 'from']],
  ['eazy-sms', ['apiKey', 'channelId']],
  ['mobishastra', ['baseUrl', 'user', 'password', 'from']],
  ['afro-message', ['apiKey', 'from']],
  ['unifonic', ['appSid', 'from']],
  ['smsmode', ['apiKey', 'from']],
  ['imedia', ['apiKey', 'from']],
  ['isendpro-sms', ['user', 'apiKey', 'from']],
  ['cm-telecom', ['apiKey', 'from']],
  ['ruach-sms', ['apiKey', 'from']],
  ['clickatell', ['apiKey']],
  ['generic-sms', ['baseUrl', 'apiKey', 'from']],
  ['novu-sms', []],
];

const CHAT: Row[] = [
  ['slack', []],
  ['discord', []],
  ['msteams', []],
  ['mattermost', []],
  ['ryver', []],
  ['zulip', []],
  ['grafana-on-call', []],
  ['getstream', ['apiKey']],
  ['rocket-chat', ['token', 'user']],
  ['whatsapp-business', ['apiToken', 'phoneNumberIdentification']],
  ['chat-webhook', []],
  ['novu-slack', []],
  ['line', []],
  ['webex-messaging', ['apiToken']],
  ['telegram', ['apiToken']],
  ['sendblue', ['apiKey', 'secretKey', 'from']],
  ['novu-web-chat', []],
];

const PUSH: Row[] = [
  ['fcm', ['serviceAccount']],
  ['apns', ['secretKey', 'apiKey', 'projectName', 'applicationId']],
  ['expo', []],
  ['one-signal', ['applicationId', 'apiKey']],
  ['pushpad', ['apiKey', 'applicationId']],
  ['push-webhook', ['webhookUrl', 'secretKey']],
  ['pusher-beams', ['instanceId', 'secretKey']],
  ['appio', ['apiKey']],
];

const AGENT: Row[] = [
  ['anthropic', ['apiKey']],
  ['novu-anthropic', []],
  ['anthropic-aws', ['accessKey', 'secretKey', 'region']],
  ['pagerduty', ['apiKey']],
  ['opsgenie', ['apiKey']],
  ['grafana', ['apiKey', 'baseUrl']],
  ['tool-webhook', ['webhookUrl']],
];

function entries(rows: Row[], kind: IntegrationKind, channel?: DeliveryChannel): CatalogueEntry[] {
  return rows.map(([id, required]) => ({ id, kind, channel, requiredCredentials: required }));
}

export const PROVIDER_CATALOGUE: readonly CatalogueEntry[] = [
  ...entries(IN_APP, 'delivery', 'in_app'),
  ...entries(EMAIL, 'delivery', 'email'),
  ...entries(SMS, 'delivery', 'sms'),
  ...entries(CHAT, 'delivery', 'chat'),
  ...entries(PUSH, 'delivery', 'push'),
  ...entries(AGENT, 'agent'),
];

export const PROVIDER_IDS: readonly string[] = [...new Set(PROVIDER_CATALOGUE.map((e) => e.id))];
export const CHAT_PROVIDER_IDS: readonly string[] = CHAT.map(([id]) => id);
export const PUSH_PROVIDER_IDS: readonly string[] = PUSH.map(([id]) => id);

/** Every catalogue entry for a provider id (two for `clickatell`). */
export function catalogueEntries(providerId: string): CatalogueEntry[] {
  return PROVIDER_CATALOGUE.filter((e) => e.id === providerId);
}

/**
 * The entry for a provider on a channel. With no channel given, a provider that serves exactly one
 * channel (or is agent-kind) is unambiguous; `clickatell` then needs the channel.
 */
export function findCatalogueEntry(providerId: string, channel?: DeliveryChannel): CatalogueEntry | undefined {
  const found = catalogueEntries(providerId);
  if (channel) return found.find((e) => e.channel === channel);
  return found.length === 1 ? found[0] : undefined;
}

/** The required credential fields missing (absent or empty string) from `credentials`. */
export function missingCredentials(entry: CatalogueEntry, credentials: Record<string, unknown>): string[] {
  return entry.requiredCredentials.filter((field) => {
    const value = credentials[field];
    return value === undefined || value === null || value === '';
  });
}

/**
 * The stored form of a credentials object: the spec types `port` as a string, but a client sending
 * the number 587 means the same thing, so it is kept as "587" rather than refused.
 */
export function normalizeCredentials(credentials: Record<string, unknown>): Record<string, unknown> {
  return typeof credentials.port === 'number' ? { ...credentials, port: String(credentials.port) } : credentials;
}
