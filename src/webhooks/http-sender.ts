import type { Config } from '../config.js';
import { assertOutboundAllowed, createGuardedDispatcher, createOutboundFetch } from '../providers/outbound.js';
import { ProviderError } from '../providers/ports.js';
import type { WebhookRequest, WebhookResponse, WebhookSender } from './ports.js';

/** Reading more of an answer than the log keeps is wasted; a receiver could also answer without end. */
const MAX_BODY_READ = 64 * 1024;

/**
 * Sends webhooks with the providers' guarded fetch: the private-address guard before the request and at connection
 * time (`HERALD_OUTBOUND_ALLOW` exempts hosts), a timeout covering the body, no redirects followed.
 */
export function createWebhookSender(config: Config): WebhookSender {
  const dispatcher = createGuardedDispatcher(config.outbound.allow);
  const outboundFetch = createOutboundFetch({ timeoutMs: config.webhooks.timeoutMs, userAgent: config.outbound.userAgent, allow: config.outbound.allow, dispatcher });
  return {
    async refusal(url: string): Promise<string | undefined> {
      try {
        await assertOutboundAllowed(url, config.outbound.allow);
        return undefined;
      } catch (error) {
        // A name that does not resolve now may resolve later: only a refused address is a refusal.
        if (error instanceof ProviderError && !error.retryable) return error.message;
        return undefined;
      }
    },
    async send(request: WebhookRequest): Promise<WebhookResponse> {
      const started = performance.now();
      try {
        const response = await outboundFetch(request.url, {
          method: 'POST',
          headers: { ...request.headers, 'content-type': 'application/json' },
          body: request.body,
        });
        const body = await readLimited(response);
        return { statusCode: response.status, body, durationMs: Math.round(performance.now() - started) };
      } catch (error) {
        const refused = error instanceof ProviderError && !error.retryable;
        return { body: '', durationMs: Math.round(performance.now() - started), error: error instanceof Error ? error.message : String(error), refused };
      }
    },
  };
}

async function readLimited(response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.length;
    if (size >= MAX_BODY_READ) {
      await reader.cancel();
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}
