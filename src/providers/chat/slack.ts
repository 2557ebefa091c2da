import type { ChannelProvider } from '../ports.js';
import { postToWebhook, webhookUrlOf } from './webhook-target.js';

/**
 * Slack incoming webhook: POST JSON {text, ...overrides (blocks, attachments)} to the hook URL;
 * Slack answers 200 "ok" and has no message id for webhooks.
 */
export const slackProvider: ChannelProvider<'chat'> = {
  id: 'slack',
  channel: 'chat',
  async send(credentials, message, ctx) {
    const url = webhookUrlOf(credentials, message, 'slack');
    const { date, raw } = await postToWebhook(ctx, 'Slack', url, { text: message.content, ...message.overrides });
    return { date, raw };
  },
};
