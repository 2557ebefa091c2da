import type { ChannelProvider } from '../ports.js';
import { parseJson } from '../vendor-http.js';
import { postToWebhook, webhookUrlOf } from './webhook-target.js';

/**
 * Discord webhook: POST JSON {content, ...overrides (embeds, username)} to the webhook URL with `?wait=true`,
 * so Discord answers with the created message (and its id) instead of 204.
 */
export const discordProvider: ChannelProvider<'chat'> = {
  id: 'discord',
  channel: 'chat',
  async send(credentials, message, ctx) {
    const url = new URL(webhookUrlOf(credentials, message, 'discord'));
    url.searchParams.set('wait', 'true');
    const answer = await postToWebhook(ctx, 'Discord', url.toString(), { content: message.content, ...message.overrides });
    return { id: parseJson<{ id?: string }>(answer.text)?.id, date: answer.date, raw: answer.raw };
  },
};
