import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Test files at once. Most of a file's time is spent waiting on what it starts (herald processes, chromium,
 * PostgreSQL, Redis), so one more file than there are cores keeps the cores busy; vitest's default (cores - 1) runs
 * one file at a time on a 2-core CI machine. The few files that must not share the machine run alone from
 * scripts/test.mjs (ALONE there).
 */
const workers = Math.min(availableParallelism() + 1, 4);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: workers,
    minWorkers: 1,
    // Builds web/dist when a dashboard source changed (a no-op otherwise): the browser tests load it.
    globalSetup: ['test/helpers/dashboard-build.ts'],
  },
});
