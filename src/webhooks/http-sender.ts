import type { Config } from '../config.js';
import { assertOutboundAllowed, createGuardedDispatcher, toProviderError } from '../providers/outbound.js';
import { ProviderError } from '../providers/ports.js';
import type { WebhookRequest, WebhookResponse, WebhookSender } from './ports.js';

/** Reading more of an answer than the log keeps is wasted; a receiver could also answer without end. */
const MAX_BODY_READ = 64 * 1024;

/**
 * Sends webhooks through the providers' guarded connection pool: the private-address guard before each request and
 * at connection time (`HERALD_OUTBOUND_ALLOW` exempts hosts), a timeout covering the body, no redirects followed.
 * undici's `request` rather than fetch: the same pool and guard without fetch's WHATWG Request, Headers and stream
 * objects, the larger part of a webhook's CPU.
 */
export function createWebhookSender(config: Config): WebhookSender {
  const dispatcher = createGuardedDispatcher(config.outbound.allow);
  const { timeoutMs } = config.webhooks;
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
      let url: URL | undefined;
      try {
        url = new URL(request.url);
        if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ProviderError(`Outbound request to ${url.protocol} URL refused: only http and https`, false);
        await assertOutboundAllowed(url, config.outbound.allow);
        const response = await (await dispatcher()).request({
          origin: url.origin,
          path: url.pathname + url.search,
          method: 'POST',
          headers: { ...request.headers, 'content-type': 'application/json', 'user-agent': config.outbound.userAgent },
          body: request.body,
          signal: AbortSignal.timeout(timeoutMs),
        });
        const body = await readLimited(response.body);
        return { statusCode: response.statusCode, body, durationMs: Math.round(performance.now() - started) };
      } catch (error) {
        const failure = toProviderError(error, url ? `${url.origin}${url.pathname}` : request.url, timeoutMs);
        return { body: '', durationMs: Math.round(performance.now() - started), error: failure.message, refused: !failure.retryable };
      }
    },
  };
}

async function readLimited(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= MAX_BODY_READ) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}
