import { ValidationError } from '../../domain/errors.js';
import type { Credentials, DeliveryChannel } from '../../domain/types.js';
import type { Deps } from '../deps.js';

export interface CheckIntegrationInput {
  providerId: string;
  channel?: DeliveryChannel;
  credentials: Credentials;
}

/** Slack beyond the provider's own timeout before Herald gives up on a check that ignores it. */
const TIMEOUT_GRACE_MS = 1_000;

/**
 * Runs the provider's live credential check (SMTP verify, an authenticated probe). A provider without a
 * check, or one Herald cannot deliver through, passes. A failure is a 400 carrying the provider's reason.
 */
export async function checkIntegration(deps: Deps, input: CheckIntegrationInput): Promise<void> {
  if (!input.channel) return;
  const provider = deps.providers.get(input.providerId, input.channel);
  if (!provider?.check) return;
  const timeoutMs = deps.config.providerCheckTimeoutMs;
  const ctx = deps.providers.context({ timeoutMs });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`check timed out after ${timeoutMs} ms`)), timeoutMs + TIMEOUT_GRACE_MS);
  });
  try {
    await Promise.race([provider.check(input.credentials, ctx), deadline]);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    deps.logger.info({ providerId: input.providerId, reason }, 'integration credentials check failed');
    throw new ValidationError([`credentials check failed for provider ${input.providerId}: ${reason}`]);
  } finally {
    clearTimeout(timer);
  }
}
