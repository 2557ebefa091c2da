import { buildDashboard } from '../../scripts/build-web.mjs';

/** vitest globalSetup: the dashboard tests need web/dist; a build that is current is not redone. */
export default async function setup(): Promise<void> {
  await buildDashboard({ ifStale: true });
}
