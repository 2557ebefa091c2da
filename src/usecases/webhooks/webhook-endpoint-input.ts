import { ValidationError } from '../../domain/errors.js';
import { isWebhookEventType } from '../../domain/webhooks.js';
import type { Deps } from '../deps.js';

/** Headers Herald sets itself (or that would break the request): an endpoint may not override them. */
const RESERVED_HEADERS = new Set(['content-type', 'content-length', 'host', 'user-agent', 'connection', 'transfer-encoding', 'webhook-id', 'webhook-timestamp', 'webhook-signature']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;

/**
 * Checks what a create or update sets; every problem names its field. The URL must be http(s) and one the outbound
 * guard allows (not a private, loopback or link-local address unless HERALD_OUTBOUND_ALLOW names it).
 */
export async function validateEndpointInput(
  deps: Pick<Deps, 'webhooks'>,
  input: { url?: string; eventTypes?: string[]; headers?: Record<string, string> },
): Promise<void> {
  const problems: string[] = [];
  if (input.url !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(input.url);
    } catch {
      problems.push(`url must be an absolute http or https URL, got ${JSON.stringify(input.url)}`);
    }
    if (url && url.protocol !== 'http:' && url.protocol !== 'https:') problems.push(`url must use http or https, got ${url.protocol}`);
    else if (url && (url.username || url.password)) problems.push('url must not carry credentials (use headers)');
    else if (url) {
      const refusal = await deps.webhooks.refusal(url.href);
      if (refusal) problems.push(`url: ${refusal} (allow it with HERALD_OUTBOUND_ALLOW)`);
    }
  }
  for (const type of input.eventTypes ?? []) {
    if (!isWebhookEventType(type)) problems.push(`eventTypes: unknown event type ${JSON.stringify(type)} (see GET /v2/webhooks/event-types)`);
  }
  for (const [name, value] of Object.entries(input.headers ?? {})) {
    if (!HEADER_NAME.test(name)) problems.push(`headers: ${JSON.stringify(name)} is not a valid header name`);
    else if (RESERVED_HEADERS.has(name.toLowerCase())) problems.push(`headers: ${name} is set by Herald and cannot be overridden`);
    if (typeof value !== 'string' || /[\r\n]/.test(value)) problems.push(`headers.${name} must be a single-line string`);
  }
  if (problems.length) throw new ValidationError(problems);
}
