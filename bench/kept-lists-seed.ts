import { mkdirSync } from 'node:fs';
import { startHerald } from '../test/helpers/herald-process.js';
import { buildServer } from '../scripts/build-server.mjs';
import { BENCH_SECRET, createInAppWorkflow, inAppMessageCount, load, seedListMessages, waitForMessages } from './lib/bench-client.js';

/**
 * `node --import tsx bench/kept-lists-seed.ts <dataDir> [seconds]`: bench:http's data set, kept. An embedded Herald
 * (this tree's build) on <dataDir> gets bench:http's trigger load (50 connections, a new subscriber per trigger, the
 * one-step in-app workflow) for `seconds` (10), its deliveries, then the lists' seed (300 subscribers × 12 messages),
 * and stops. bench/kept-lists.ts then serves copies of <dataDir> from either tree, so each run reads the same data
 * without seeding it.
 */
const dataDir = process.argv[2]!;
const seconds = Number(process.argv[3] ?? 10);
mkdirSync(dataDir, { recursive: true });
await buildServer({ ifStale: true, quiet: true });
const herald = await startHerald({ HERALD_DATA_DIR: dataDir, HERALD_BOOTSTRAP_SECRET_KEY: BENCH_SECRET, LOG_LEVEL: 'warn' });
try {
  await createInAppWorkflow(herald.url, BENCH_SECRET, 'bench-http', { name: 'bench http' });
  const before = await inAppMessageCount(herald.url, BENCH_SECRET);
  const triggers = await load({ kind: 'trigger', url: herald.url, connections: 50, durationSeconds: seconds, headers: { authorization: `ApiKey ${BENCH_SECRET}` }, workflowId: 'bench-http', subscriberPrefix: 'bench-kept' });
  const accepted = triggers.statusCounts['201'] ?? 0;
  const delivered = await waitForMessages(herald.url, BENCH_SECRET, before + accepted, 300_000);
  const listSubscribers = Array.from({ length: 300 }, (_, i) => `list-kept-${i}`);
  const seeded = await seedListMessages(herald.url, BENCH_SECRET, 'bench-http', listSubscribers);
  console.log(JSON.stringify({ accepted, delivered: delivered.count - before, seeded, eventPages: Math.min(2000, Math.floor(accepted / 10)) }));
} finally {
  await herald.stop();
}
