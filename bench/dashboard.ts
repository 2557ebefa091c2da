import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { sql, type Kysely } from 'kysely';
import type { Page } from 'playwright-core';
import { loadConfig } from '../src/config.js';
import { createContainer } from '../src/container.js';
import { buildApp } from '../src/http/app.js';
import { bootstrapTenancy } from '../src/usecases/tenancy/bootstrap-tenancy.js';
import { buildDashboard } from '../scripts/build-web.mjs';
import { launchBrowser } from '../test/helpers/browser.js';
import { median } from './lib/rounds.js';
import { createSeedPlan, seedListRows, seedProbes, seedSubscribers } from './lib/list-seed.js';
import { createDashboardAdmin } from './lib/dashboard-admin.js';
import { positiveInteger } from './lib/cli-options.js';
import { latencyBucket } from '../src/domain/overview.js';

/**
 * `npm run bench:dashboard`: how long each dashboard page takes to render in Chromium with 1M notification
 * events (each with a job, two execution details and a message) in embedded SQLite. The rows are written straight
 * into SQLite by the list benchmarks' seeder; the server is the real HTTP app serving the built dashboard.
 *
 *   node --import tsx bench/dashboard.ts [--events 1000000] [--rounds 5]
 *
 * A page's time runs from the navigation (a full page load, so it includes fetching the bundle and every API call
 * the page makes) until its content is on screen: the page's ready element is visible and no "Loading" text is
 * left. Each page is loaded `rounds` times after one warm-up load; the median and the worst are reported.
 * Goal: < 1 s per page.
 */
const here = dirname(fileURLToPath(import.meta.url));
const SECRET = 'sk_bench_dashboard_0123456789abcdef0123456789ab';
const ADMIN = { email: 'bench@example.com', password: 'bench password 123' };

interface PageCase {
  name: string;
  path: string;
  /** A selector that is visible once the page shows its data. */
  ready: string;
}

interface PageTiming {
  name: string;
  path: string;
  medianMs: number;
  maxMs: number;
  /** Median over the loads of the slowest API answer of each load. */
  medianSlowestApiMs: number;
  samples: number[];
}

/** One load: the time to content, and the slowest API answer the page waited for (server + transfer). */
async function timePage(page: Page, baseUrl: string, pageCase: PageCase): Promise<{ totalMs: number; slowestApiMs: number }> {
  const apiTimes: number[] = [];
  const onResponse = (response: import('playwright-core').Response) => {
    if (!/\/v[12]\//.test(new URL(response.url()).pathname)) return;
    const timing = response.request().timing();
    if (timing.responseEnd > 0) apiTimes.push(timing.responseEnd);
    else response.finished().then(() => apiTimes.push(response.request().timing().responseEnd), () => undefined);
  };
  page.on('response', onResponse);
  const started = performance.now();
  await page.goto(`${baseUrl}/dashboard${pageCase.path}`, { waitUntil: 'commit' });
  await page.locator(pageCase.ready).first().waitFor({ state: 'visible', timeout: 30_000 });
  await page.waitForFunction(() => !/Loading/.test(document.querySelector('main')?.textContent ?? ''), undefined, { timeout: 30_000, polling: 'raf' });
  const totalMs = performance.now() - started;
  page.off('response', onResponse);
  return { totalMs, slowestApiMs: apiTimes.length ? Math.max(...apiTimes) : 0 };
}

async function main(): Promise<void> {
  const options = new Command()
    .option('--events <n>', 'notification events to seed', positiveInteger, 1_000_000)
    .option('--rounds <n>', 'timed loads per page', positiveInteger, 5)
    .option('--output <file>', 'JSON results file', join(here, 'results/dashboard-embedded.json'))
    .option('--only <text>', 'time only the pages whose name contains this text (e.g. overview)')
    .parse(process.argv)
    .opts<{ events: number; rounds: number; output: string; only?: string }>();
  const log = (message: string) => process.stderr.write(`[bench:dashboard ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

  await buildDashboard({ ifStale: true });
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-dashboard-'));
  const config = loadConfig({
    HERALD_DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'silent',
    HERALD_RATE_LIMIT: 'false',
    HERALD_BOOTSTRAP_SECRET_KEY: SECRET,
  });
  const container = await createContainer(config);
  const browser = await launchBrowser();
  try {
    const { deps, db } = container;
    await bootstrapTenancy(deps, { bootstrapSecretKey: SECRET });
    const environment = (await deps.store.tenancy.findEnvironmentByName('development'))!;
    const plan = createSeedPlan(environment._id, environment._organizationId, { maxRows: options.events });
    await seedSubscribers(db, deps.store, plan);
    let lastLog = 0;
    await seedListRows(db, plan, 0, options.events, {
      dialect: 'sqlite',
      onProgress: ({ done, total, elapsedMs }) => {
        if (elapsedMs - lastLog < 10_000 && done < total) return;
        lastLog = elapsedMs;
        log(`seeding: ${done}/${total} events in ${Math.round(elapsedMs / 1000)} s`);
      },
    });
    log(`job statuses: ${JSON.stringify(await markStatuses(db))}`);
    log(`overview counts: ${JSON.stringify(await fillOverviewCounts(db))}`);
    await createDashboardAdmin(deps, ADMIN);
    const probes = seedProbes(plan, options.events);
    const app = await buildApp(deps);
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const newest = await fetch(`${url}/v1/notifications?limit=1`, { headers: { authorization: `ApiKey ${SECRET}` } }).then((response) => response.json());
    const eventId: string = newest.data[0]._id;

    const allCases: PageCase[] = [
      // The landing page: counts kept at write time (filled for the seeded rows by fillOverviewCounts), the chart's chunk.
      { name: 'overview, last 24 h', path: '/overview?range=24h', ready: '.chart-box canvas' },
      { name: 'overview, last 30 d (every seeded event)', path: '/overview?range=30d', ready: '.chart-box canvas' },
      { name: 'activity (newest 20 of all events)', path: '/activity', ready: 'table.events tbody tr' },
      { name: 'activity filtered by subscriber', path: `/activity?subscriber=${encodeURIComponent(probes.subscriberId)}`, ready: 'table.events tbody tr' },
      { name: 'activity filtered by transactionId', path: `/activity?transactionId=${encodeURIComponent(probes.transactionId)}`, ready: 'table.events tbody tr' },
      { name: 'activity filtered by channel', path: `/activity?channel=${probes.channel}`, ready: 'table.events tbody tr' },
      { name: 'activity filtered by status failed (0.1 %)', path: '/activity?status=failed', ready: 'table.events tbody tr' },
      { name: 'activity filtered by status pending (10 events)', path: '/activity?status=pending', ready: 'table.events tbody tr' },
      { name: 'activity filtered by status canceled (20 events)', path: '/activity?status=canceled', ready: 'table.events tbody tr' },
      { name: 'activity filtered by status completed', path: '/activity?status=completed', ready: 'table.events tbody tr' },
      { name: 'event timeline', path: `/activity/${eventId}`, ready: '.timeline .job' },
      { name: 'workflows', path: '/workflows', ready: 'h1' },
      { name: 'integrations', path: '/integrations', ready: 'h1' },
      { name: 'subscribers', path: '/subscribers', ready: 'table tbody tr' },
      { name: 'subscriber with messages', path: `/subscribers/${encodeURIComponent(probes.subscriberId)}`, ready: 'section[aria-labelledby=messages-title] tbody tr' },
      // The same page until its live <Inbox /> preview (a lazily loaded chunk, then a session and a page of the Inbox API) shows notifications.
      { name: 'subscriber with its live Inbox preview', path: `/subscribers/${encodeURIComponent(probes.subscriberId)}`, ready: '.inbox-preview .nv-notification' },
      { name: 'topics', path: '/topics', ready: 'table tbody tr' },
      { name: 'settings', path: '/settings', ready: 'section[aria-labelledby=audit-title]' },
    ];
    const cases = options.only ? allCases.filter((pageCase) => pageCase.name.includes(options.only!)) : allCases;

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${url}/dashboard/`);
    await page.locator('input[type=email]').fill(ADMIN.email);
    await page.locator('input[type=password]').fill(ADMIN.password);
    await page.locator('button[type=submit]').click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();

    const timings: PageTiming[] = [];
    for (const pageCase of cases) {
      await timePage(page, url, pageCase); // warm-up: caches, JIT, SQLite pages
      const samples: number[] = [];
      const apiSamples: number[] = [];
      for (let round = 0; round < options.rounds; round++) {
        const { totalMs, slowestApiMs } = await timePage(page, url, pageCase);
        samples.push(totalMs);
        apiSamples.push(slowestApiMs);
      }
      const timing: PageTiming = {
        name: pageCase.name,
        path: pageCase.path,
        medianMs: Math.round(median(samples)),
        maxMs: Math.round(Math.max(...samples)),
        medianSlowestApiMs: Math.round(median(apiSamples)),
        samples: samples.map(Math.round),
      };
      timings.push(timing);
      log(`${timing.name}: median ${timing.medianMs} ms, worst ${timing.maxMs} ms, slowest API answer ${timing.medianSlowestApiMs} ms`);
    }
    await context.close();
    await app.close();

    const table = [
      `| page (${options.events.toLocaleString('en-US')} events, embedded) | median | worst of ${options.rounds} | slowest API answer (median) | median < 1 s |`,
      '|---|---|---|---|---|',
      ...timings.map((timing) => `| ${timing.name} | ${timing.medianMs} ms | ${timing.maxMs} ms | ${timing.medianSlowestApiMs} ms | ${timing.medianMs < 1000 ? 'yes' : 'NO'} |`),
    ].join('\n');
    console.log(table);
    mkdirSync(dirname(options.output), { recursive: true });
    writeFileSync(
      options.output,
      JSON.stringify({ date: new Date().toISOString(), events: options.events, rounds: options.rounds, cpus: cpus().length, loadAverage1m: loadavg()[0], timings }, null, 2) + '\n',
    );
  } finally {
    await browser.close();
    await container.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * The seeder's jobs are all completed: some are given other statuses for the Activity status filter, spread evenly
 * over time (jobs are seeded one per event in time order, so rowid order is event order): every 1000th failed,
 * every 100,000th delayed (so `pending` has fewer matches than a page and its list reads every event) and every
 * 50,000th canceled.
 */
async function markStatuses(db: Kysely<any>): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const [status, every, at] of [['failed', 1000, 500], ['delayed', 100_000, 7], ['canceled', 50_000, 11]] as const) {
    const result = await sql`update jobs set status = ${status} where rowid % ${every} = ${at}`.execute(db);
    counts[status] = Number(result.numAffectedRows ?? 0);
  }
  return counts;
}

/**
 * The seeder writes rows straight into SQLite, past the repositories that keep the overview's counts (migration 0024)
 * as each step ends: the same counts are added up here from the seeded jobs and messages, once, as the write path
 * would have left them. The latency histogram gets each sent step's real bucket from its job's times.
 */
async function fillOverviewCounts(db: Kysely<any>): Promise<Record<string, number>> {
  const channels = sql`('in_app', 'email', 'sms', 'chat', 'push')`;
  await sql`
    insert into overview_counts (environment_id, hour, channel, provider_id, workflow_id, outcome, shard, count)
    select environment_id, substr(updated_at, 1, 13), type, provider_id, coalesce(template_id, ''),
      case status when 'completed' then 'sent' else status end, 0, count(*)
    from jobs where type in ${channels} and status in ('completed', 'failed', 'skipped')
    group by environment_id, substr(updated_at, 1, 13), type, provider_id, coalesce(template_id, ''), status
  `.execute(db);
  await sql`
    insert into overview_counts (environment_id, hour, channel, provider_id, workflow_id, outcome, shard, count)
    select environment_id, substr(created_at, 1, 13), 'in_app', '', coalesce(template_id, ''), 'read', 0, sum(read)
    from messages where channel = 'in_app' and deleted = 0
    group by environment_id, substr(created_at, 1, 13), coalesce(template_id, '')
  `.execute(db);
  const jobs = await sql<{ environment_id: string; hour: string; type: string; ms: number }>`
    select environment_id, substr(updated_at, 1, 13) as hour, type, (julianday(updated_at) - julianday(created_at)) * 86400000.0 as ms
    from jobs where type in ${channels} and status = 'completed'
  `.execute(db);
  const histogram = new Map<string, number>();
  for (const row of jobs.rows) {
    const key = `${row.environment_id}|${row.hour}|${row.type}|${latencyBucket(row.ms)}`;
    histogram.set(key, (histogram.get(key) ?? 0) + 1);
  }
  for (const [key, count] of histogram) {
    const [environmentId, hour, channel, bucket] = key.split('|');
    await sql`insert into overview_latency (environment_id, hour, channel, bucket, shard, count) values (${environmentId}, ${hour}, ${channel}, ${Number(bucket)}, 0, ${count})`.execute(db);
  }
  const [counted] = (await sql<{ rows: number }>`select count(*) as rows from overview_counts`.execute(db)).rows;
  return { overviewCountRows: Number(counted.rows), latencyRows: histogram.size };
}

await main();
