import type { DeliveryChannel } from '../domain/types.js';
import { discordProvider } from './chat/discord.js';
import { chatWebhookProvider } from './chat/chat-webhook.js';
import { mattermostProvider } from './chat/mattermost.js';
import { msteamsProvider } from './chat/msteams.js';
import { slackProvider } from './chat/slack.js';
import { emailWebhookProvider } from './email/email-webhook.js';
import { mailgunProvider } from './email/mailgun.js';
import { nodemailerProvider } from './email/nodemailer.js';
import { postmarkProvider } from './email/postmark.js';
import { resendProvider } from './email/resend.js';
import { sendgridProvider } from './email/sendgrid.js';
import { sesProvider } from './email/ses.js';
import type { ChannelProvider } from './ports.js';
import { apnsProvider } from './push/apns.js';
import { expoProvider } from './push/expo.js';
import { fcmProvider } from './push/fcm.js';
import { oneSignalProvider } from './push/one-signal.js';
import { pushWebhookProvider } from './push/push-webhook.js';
import { genericSmsProvider } from './sms/generic-sms.js';
import { nexmoProvider } from './sms/nexmo.js';
import { plivoProvider } from './sms/plivo.js';
import { twilioProvider } from './sms/twilio.js';

type ProviderChannel = Exclude<DeliveryChannel, 'in_app'>;

/** The providers Herald can deliver through, per channel; catalogue ids missing here are configuration-only. */
const PROVIDERS: { [C in ProviderChannel]: ChannelProvider<C>[] } = {
  email: [
    nodemailerProvider,
    sendgridProvider,
    mailgunProvider,
    postmarkProvider,
    resendProvider,
    sesProvider,
    emailWebhookProvider,
  ],
  sms: [twilioProvider, nexmoProvider, plivoProvider, genericSmsProvider],
  chat: [slackProvider, discordProvider, msteamsProvider, mattermostProvider, chatWebhookProvider],
  push: [fcmProvider, apnsProvider, expoProvider, oneSignalProvider, pushWebhookProvider],
};

/**
 * The delivery provider for an integration's provider id on a channel, or undefined when Herald cannot
 * deliver through it (the step then records "provider not supported for delivery"). In-app delivery is
 * Herald's own inbox, not a provider. This is the only place that switches on provider id.
 */
export function getDeliveryProvider<C extends DeliveryChannel>(
  providerId: string,
  channel: C,
): (C extends ProviderChannel ? ChannelProvider<C> : never) | undefined {
  if (channel === 'in_app') return undefined;
  const candidates = PROVIDERS[channel as ProviderChannel] as ChannelProvider[];
  return candidates.find((provider) => provider.id === providerId) as
    | (C extends ProviderChannel ? ChannelProvider<C> : never)
    | undefined;
}
