import type { Deps } from '../deps.js';
import { createSetupLink, setupLinkUrl } from './create-setup-link.js';

/** At start-up, while no dashboard user exists: logs the one-time link that creates the first admin. */
export async function printSetupLink(deps: Pick<Deps, 'store' | 'clock' | 'config' | 'logger'>, baseUrl: string): Promise<void> {
  const link = await createSetupLink(deps);
  if (!link) return;
  deps.logger.info(
    { setupUrl: setupLinkUrl(baseUrl, link.token), expiresAt: link.expiresAt },
    `no dashboard user yet: open ${setupLinkUrl(baseUrl, link.token)} to create the first admin (one-time link)`,
  );
}
