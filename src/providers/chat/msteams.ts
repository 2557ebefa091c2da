import type { ChannelProvider } from '../ports.js';
import { parseJson } from '../vendor-http.js';
import { postToWebhook, webhookUrlOf } from './webhook-target.js';

/**
 * Microsoft Teams incoming webhook. Content that is a JSON object (a MessageCard or an Adaptive Card message
 * built in the template) is posted as is; plain text becomes a minimal MessageCard.
 */
function teamsBody(content: string): Record<string, unknown> {
  const parsed = parseJson<unknown>(content);
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  return {
    '@type': 'MessageCard',
    '@context': 'https://schema.org/extensions',
    summary: content.slice(0, 100),
    text: content,
  };
}

export const msteamsProvider: ChannelProvider<'chat'> = {
  id: 'msteams',
  channel: 'chat',
  async send(credentials, message, ctx) {
    const url = webhookUrlOf(credentials, message, 'msteams');
    const { date, raw } = await postToWebhook(ctx, 'Microsoft Teams', url, { ...teamsBody(message.content), ...message.overrides });
    return { date, raw };
  },
};
