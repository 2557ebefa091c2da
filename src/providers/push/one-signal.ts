import { baseUrlOf, requiredCredential } from '../credential-values.js';
import { ProviderError, type ChannelProvider } from '../ports.js';
import { callVendor, jsonHeaders, parseJson } from '../vendor-http.js';
import { requireTargets, settleTokenOutcomes, tokenFailed, tokenSucceeded } from './token-outcomes.js';

/**
 * OneSignal Create Notification: POST /notifications?c=push with `Authorization: Key <apiKey>` and
 * {app_id, include_subscription_ids, headings, contents, data}. Device tokens are OneSignal subscription
 * (player) ids. OneSignal answers 200 with `errors.invalid_player_ids` (or `invalid_subscription_ids`) for
 * dead ids, and with an `errors` array and no id when nothing was sent.
 */
const ID = 'one-signal';
const VENDOR = 'OneSignal';
const DEFAULT_BASE_URL = 'https://api.onesignal.com';

interface OneSignalAnswer {
  id?: string;
  errors?: string[] | Record<string, unknown>;
}

function invalidIdsOf(errors: OneSignalAnswer['errors']): Set<string> {
  if (!errors || Array.isArray(errors)) return new Set();
  const lists = Object.entries(errors)
    .filter(([key, value]) => key.startsWith('invalid_') && Array.isArray(value))
    .flatMap(([, value]) => value as unknown[]);
  return new Set(lists.map(String));
}

export const oneSignalProvider: ChannelProvider<'push'> = {
  id: ID,
  channel: 'push',
  async send(credentials, message, ctx) {
    const tokens = requireTargets(message.target, ID);
    const body = {
      app_id: requiredCredential(credentials, 'applicationId', ID),
      target_channel: 'push',
      include_subscription_ids: tokens,
      headings: { en: message.title },
      contents: { en: message.content },
      data: message.payload,
      ...message.overrides,
    };
    const answer = await callVendor(ctx, VENDOR, `${baseUrlOf(credentials, DEFAULT_BASE_URL)}/notifications?c=push`, {
      method: 'POST',
      headers: jsonHeaders({ authorization: `Key ${requiredCredential(credentials, 'apiKey', ID)}` }),
      body: JSON.stringify(body),
    });
    const json = parseJson<OneSignalAnswer>(answer.text);
    const invalidIds = invalidIdsOf(json?.errors);
    const delivered = Boolean(json?.id);
    const outcomes = tokens.map((token) => {
      if (invalidIds.has(token)) {
        return tokenFailed(token, new ProviderError('OneSignal: invalid subscription id', false, answer.text), true);
      }
      if (delivered) return tokenSucceeded(token, json?.id);
      const reason = Array.isArray(json?.errors) ? json.errors.join('; ') : 'no notification created';
      return tokenFailed(token, new ProviderError(`OneSignal: ${reason}`, false, answer.text, answer.status));
    });
    return settleTokenOutcomes(outcomes, answer.text);
  },
};
