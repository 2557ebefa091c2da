import { baseUrlOf, optionalCredential } from '../credential-values.js';
import { ProviderError, type ChannelProvider } from '../ports.js';
import { callVendor, jsonHeaders, parseJson } from '../vendor-http.js';
import { requireTargets, settleTokenOutcomes, tokenFailed, tokenSucceeded, type TokenOutcome } from './token-outcomes.js';

/**
 * Expo push service: POST /--/api/v2/push/send with a JSON array of messages (at most 100 per request).
 * The answer's `data` holds one ticket per message, in order; `DeviceNotRegistered` marks a dead token.
 * An access token (credentials.accessToken, else apiKey) is sent as a bearer when push security is on.
 */
const ID = 'expo';
const VENDOR = 'Expo';
const DEFAULT_BASE_URL = 'https://exp.host';
const BATCH_SIZE = 100;

interface ExpoTicket {
  status?: 'ok' | 'error';
  id?: string;
  message?: string;
  details?: { error?: string };
}

function chunk<T>(items: T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

export const expoProvider: ChannelProvider<'push'> = {
  id: ID,
  channel: 'push',
  async send(credentials, message, ctx) {
    const tokens = requireTargets(message.target, ID);
    const accessToken = optionalCredential(credentials, 'accessToken') ?? optionalCredential(credentials, 'apiKey');
    const headers = jsonHeaders(accessToken ? { authorization: `Bearer ${accessToken}` } : {});
    const url = `${baseUrlOf(credentials, DEFAULT_BASE_URL)}/--/api/v2/push/send`;
    const outcomes: TokenOutcome[] = [];
    const raws: string[] = [];
    for (const batch of chunk(tokens, BATCH_SIZE)) {
      const body = batch.map((to) => ({
        to,
        title: message.title,
        body: message.content,
        data: message.payload,
        ...message.overrides,
      }));
      try {
        const answer = await callVendor(ctx, VENDOR, url, { method: 'POST', headers, body: JSON.stringify(body) });
        raws.push(answer.text);
        const tickets = parseJson<{ data?: ExpoTicket[] }>(answer.text)?.data ?? [];
        batch.forEach((token, index) => {
          const ticket = tickets[index];
          if (ticket?.status === 'ok') {
            outcomes.push(tokenSucceeded(token, ticket.id));
            return;
          }
          const reason = ticket?.details?.error ?? 'NoTicket';
          const failure = new ProviderError(`Expo: ${reason}: ${ticket?.message ?? 'no ticket returned'}`, false, answer.text);
          outcomes.push(tokenFailed(token, failure, reason === 'DeviceNotRegistered'));
        });
      } catch (error) {
        if (!(error instanceof ProviderError)) throw error;
        batch.forEach((token) => outcomes.push(tokenFailed(token, error)));
      }
    }
    return settleTokenOutcomes(outcomes, raws.join('\n'));
  },
};
