import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Builds web/dist when a dashboard source changed (a no-op otherwise): the browser tests load it.
    globalSetup: ['test/helpers/dashboard-build.ts'],
  },
});
