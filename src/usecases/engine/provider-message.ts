import type { ChannelSettings, DeliveryChannel, Integration, Message, Subscriber } from '../../domain/types.js';
import type { EmailAttachment, EmailMessage, MessageByChannel } from '../../providers/ports.js';
import { bodyOf, text, type RenderedControls } from './build-message.js';

export type ProviderChannel = Exclude<DeliveryChannel, 'in_app'>;

/** The message for the provider and the address recorded on the Message, or why nothing can be sent. */
export type BuiltProviderMessage =
  | { message: MessageByChannel[ProviderChannel]; address: Partial<Message> }
  | { missing: string };

export interface ProviderMessageInput {
  channel: ProviderChannel;
  controls: RenderedControls;
  integration: Integration;
  subscriber: Subscriber;
  payload: Record<string, unknown>;
  /** The trigger's whole `overrides` object. */
  overrides: Record<string, unknown>;
  /** The step's slug in the workflow, for `overrides.steps.<stepId>`. */
  stepId?: string;
}

function record(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function textList(value: unknown): string[] | undefined {
  const list = (Array.isArray(value) ? value : [value]).filter((entry): entry is string => typeof entry === 'string' && entry.trim() !== '');
  return list.length > 0 ? list : undefined;
}

/**
 * The provider-specific overrides passed to `send()`: Novu's `overrides.<providerId>`, then
 * `overrides.providers.<providerId>`, then `overrides.steps.<stepId>.providers.<providerId>` (later wins).
 * Channel blocks such as `overrides.email` are Herald's to interpret, never passed to a vendor as is.
 */
export function providerOverridesOf(overrides: Record<string, unknown>, providerId: string, stepId?: string): Record<string, unknown> {
  const stepProviders = stepId ? record(record(record(overrides.steps)[stepId]).providers) : {};
  return {
    ...record(overrides[providerId]),
    ...record(record(overrides.providers)[providerId]),
    ...record(stepProviders[providerId]),
  };
}

/**
 * Attachments as Herald's `{filename, content, mime}` or Novu's `{name, file, mime}`; content is base64 text.
 * Entries without a name or content are dropped.
 */
export function attachmentsOf(value: unknown): EmailAttachment[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const attachments = value.flatMap((entry): EmailAttachment[] => {
    const item = record(entry);
    const filename = text(item.filename) ?? text(item.name);
    const content = item.content ?? item.file;
    if (!filename || typeof content !== 'string') return [];
    const mime = text(item.mime) ?? text(item.contentType);
    return [{ filename, content, ...(mime ? { mime } : {}) }];
  });
  return attachments.length > 0 ? attachments : undefined;
}

function headersOf(value: unknown): Record<string, string> | undefined {
  const entries = Object.entries(record(value)).filter(([, headerValue]) => typeof headerValue === 'string') as [string, string][];
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ' };

/** A readable plain-text alternative of an HTML body: block ends become line breaks, tags go, entities decode. */
export function plainTextOf(html: string): string {
  return html
    .replace(/<(style|script|head)\b[^>]*>[\s\S]*?<\/\1>/gi, '')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|h[1-6]|li|tr|table|blockquote)>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_, name: string) => ENTITIES[name])
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * The subscriber's channel settings for the integration: the entry bound to this integration's identifier,
 * else the provider's entry bound to no integration.
 */
export function channelSettingsFor(subscriber: Subscriber, integration: Integration): ChannelSettings | undefined {
  const ofProvider = subscriber.channels.filter((entry) => entry.providerId === integration.providerId);
  return (
    ofProvider.find((entry) => entry.integrationIdentifier === integration.identifier) ??
    ofProvider.find((entry) => !entry.integrationIdentifier)
  );
}

function emailMessage(input: ProviderMessageInput, email: string, providerOverrides: Record<string, unknown>): EmailMessage {
  const { controls, overrides, payload } = input;
  const emailOverrides = record(overrides.email);
  const html = bodyOf(controls);
  const message: EmailMessage = {
    to: [email],
    subject: text(controls.subject) ?? '',
    html,
    text: text(controls.text) ?? text(emailOverrides.text) ?? plainTextOf(html),
    overrides: providerOverrides,
  };
  const from = text(emailOverrides.from);
  const senderName = text(emailOverrides.senderName);
  const replyTo = text(emailOverrides.replyTo);
  const cc = textList(emailOverrides.cc);
  const bcc = textList(emailOverrides.bcc);
  const headers = headersOf(emailOverrides.headers);
  // Novu v0 triggers carried attachments in the payload; overrides.email.attachments is the explicit form.
  const attachments = attachmentsOf(emailOverrides.attachments) ?? attachmentsOf(payload.attachments);
  if (from) message.from = from;
  if (senderName) message.senderName = senderName;
  if (replyTo) message.replyTo = replyTo;
  if (cc) message.cc = cc;
  if (bcc) message.bcc = bcc;
  if (headers) message.headers = headers;
  if (attachments) message.attachments = attachments;
  return message;
}

/** What a channel step hands its provider, built from the rendered controls, the subscriber and the overrides. */
export function buildProviderMessage(input: ProviderMessageInput): BuiltProviderMessage {
  const { channel, controls, integration, subscriber, payload } = input;
  const providerOverrides = providerOverridesOf(input.overrides, integration.providerId, input.stepId);
  const body = bodyOf(controls);
  switch (channel) {
    case 'email': {
      if (!subscriber.email) return { missing: 'subscriber has no email address' };
      return { message: emailMessage(input, subscriber.email, providerOverrides), address: { email: subscriber.email } };
    }
    case 'sms': {
      if (!subscriber.phone) return { missing: 'subscriber has no phone number' };
      return { message: { to: subscriber.phone, content: body, overrides: providerOverrides }, address: { phone: subscriber.phone } };
    }
    case 'chat': {
      const settings = channelSettingsFor(subscriber, integration);
      const webhookUrl = settings?.credentials.webhookUrl ?? text(integration.credentials.webhookUrl);
      const chatChannel = settings?.credentials.channel ?? text(integration.credentials.channelId);
      if (!webhookUrl) return { missing: `subscriber has no ${integration.providerId} webhook URL and the integration has none` };
      return {
        message: { webhookUrl, ...(chatChannel ? { channel: chatChannel } : {}), content: body, overrides: providerOverrides },
        address: { directWebhookUrl: webhookUrl },
      };
    }
    case 'push': {
      const tokens = channelSettingsFor(subscriber, integration)?.credentials.deviceTokens ?? [];
      if (tokens.length === 0) return { missing: `subscriber has no ${integration.providerId} device tokens` };
      const title = text(controls.subject) ?? text(controls.title) ?? '';
      return {
        message: { target: tokens, title, content: body, payload, overrides: providerOverrides },
        address: { deviceTokens: tokens },
      };
    }
  }
}
