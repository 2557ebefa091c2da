import type { Deps } from '../deps.js';
import { createSetupLink, setupLinkUrl } from './create-setup-link.js';

/**
 * At start-up, while no dashboard user exists: logs the one-time link that creates the first admin, and returns it
 * (`log: false`: only returns it, for the first start's banner, which shows it).
 */
export async function printSetupLink(deps: Pick<Deps, 'store' | 'clock' | 'config' | 'logger'>, baseUrl: string, options: { log?: boolean } = {}): Promise<string | undefined> {
  const link = await createSetupLink(deps);
  if (!link) return undefined;
  if (options.log === false) return setupLinkUrl(baseUrl, link.token);
  deps.logger.info(
    { setupUrl: setupLinkUrl(baseUrl, link.token), expiresAt: link.expiresAt },
    `no dashboard user yet: open ${setupLinkUrl(baseUrl, link.token)} to create the first admin (one-time link)`,
  );
  return setupLinkUrl(baseUrl, link.token);
}
