import type { Config } from './config.js';
import { flushLogLines, formatBanner, usePrettyLogs } from './logging.js';
import type { Deps } from './usecases/deps.js';
import { printSetupLink } from './usecases/dashboard/print-setup-link.js';

interface Boot {
  created: boolean;
  keys: Record<string, string>;
  identifiers: Record<string, string>;
}

/**
 * What a server process says as it starts. With JSON logs: one line per environment key (first start only, before it
 * listens, so whoever waits for it to answer finds them) and the setup link. At a terminal on the first start: one
 * short banner once it listens, holding all of it and where the data lives.
 */
export function announceKeys(deps: Deps, config: Config, boot: Boot): void {
  if (boot.created && !usePrettyLogs(config.logFormat)) {
    for (const [environment, secretKey] of Object.entries(boot.keys)) {
      // Printed once, on the first start only: the key is stored hashed and cannot be shown again.
      deps.logger.info(
        { environment, secretKey, applicationIdentifier: boot.identifiers[environment] },
        `secret key and application identifier of the ${environment} environment (the key is shown once)`,
      );
    }
  }
}

export async function announceStart(deps: Deps, config: Config, boot: Boot, url: string): Promise<void> {
  const banner = boot.created && usePrettyLogs(config.logFormat);
  const setupUrl = await printSetupLink(deps, url, { log: !banner });
  // The start-up lines (keys, setup link) are on stdout before the process says it is ready, not up to 50 ms later.
  flushLogLines();
  if (!banner) return;
  process.stdout.write(
    formatBanner({
      url,
      setupUrl,
      keys: Object.entries(boot.keys).map(([environment, secretKey]) => ({ environment, secretKey, applicationIdentifier: boot.identifiers[environment] })),
      dataDir: config.databaseUrl ? undefined : config.dataDir,
      databaseUrl: config.databaseUrl,
    }),
  );
}
