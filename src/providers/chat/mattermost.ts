import type { ChannelProvider } from '../ports.js';
import { postToWebhook, webhookUrlOf } from './webhook-target.js';

/** Mattermost incoming webhook: POST JSON {text, channel?, ...overrides (username, icon_url, props)}. */
export const mattermostProvider: ChannelProvider<'chat'> = {
  id: 'mattermost',
  channel: 'chat',
  async send(credentials, message, ctx) {
    const url = webhookUrlOf(credentials, message, 'mattermost');
    const body = { text: message.content, channel: message.channel, ...message.overrides };
    const { date, raw } = await postToWebhook(ctx, 'Mattermost', url, body);
    return { date, raw };
  },
};
