import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  growClones,
  openPostgresSeedConnection,
  openSqliteSeedConnection,
  prepareCloneSeed,
  type CloneSeedState,
  type SeedConnection,
} from '../../bench/lib/clone-seed.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { RECORD_ID } from '../helpers/shape.js';
import { messagePageSchemaSerializer } from '../helpers/message-page.js';

/**
 * `npm run bench:data-size` seeds millions of rows in SQL by copying rows Herald wrote: the copies must read back
 * through the API exactly like real ones (same shape, consistent ids and references, exact totals), or the
 * benchmark measures nothing real. Runs in the mode HERALD_TEST_MODE selects.
 */
const SUBSCRIBERS = 10;
const TARGET = 1000;

/** PostgreSQL: every index of the seeded tables, as its definition. */
async function indexDefinitions(connection: SeedConnection): Promise<string[]> {
  const rows = await connection.rows<{ definition: string }>(`select indexdef as definition from pg_indexes
    where schemaname = current_schema() and tablename in ('messages', 'notifications', 'jobs', 'execution_details') order by indexname`);
  return rows.map((row) => row.definition);
}

/** The structure of a JSON value: every leaf replaced by its type, arrays by the shape of their first item. */
function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.length ? [shapeOf(value[0])] : [];
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, shapeOf(v)]));
  return value === null ? 'null' : typeof value;
}

describe('bench clone seeding', () => {
  let server: TestServer;
  let connection: SeedConnection & { close(): Promise<void> };
  let state: CloneSeedState;
  let realMessage: any;
  let realNotification: any;
  let indexesBefore: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({ worker: true });
    await server.request('POST', '/v1/integrations', { body: { providerId: 'novu', channel: 'in_app', active: true } });
    const workflow = await server.request('POST', '/v2/workflows', {
      body: { workflowId: 'seed-test', name: 'seed test', steps: [{ name: 'inbox', type: 'in_app', controlValues: { subject: 'S {{payload.n}}', body: 'Hello {{subscriber.subscriberId}}' } }] },
    });
    expect(workflow.status).toBe(201);
    const to = Array.from({ length: SUBSCRIBERS }, (_, i) => `seed-subscriber-${i}`);
    expect((await server.request('POST', '/v1/events/trigger', { body: { name: 'seed-test', to, payload: { n: 1 } } })).status).toBe(201);
    const deadline = Date.now() + 60_000;
    while ((await server.request('GET', '/v1/messages?limit=1')).body.totalCount < SUBSCRIBERS) {
      if (Date.now() > deadline) throw new Error('the template messages were not delivered');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await server.waitForIdle({ timeoutMs: 60_000 });
    realMessage = (await server.request('GET', '/v1/messages?subscriberId=seed-subscriber-3&limit=10')).body.data[0];
    realNotification = (await server.request('GET', '/v1/notifications?limit=10')).body.data[0];

    connection = server.config.databaseUrl
      ? await openPostgresSeedConnection(server.config.databaseUrl)
      : await openSqliteSeedConnection(join(server.dataDir, 'herald.sqlite'));
    state = await prepareCloneSeed(connection, server.devEnvironmentId);
    if (connection.dialect === 'postgres') indexesBefore = await indexDefinitions(connection);
    // In two steps, as the bench grows a data set from one size to the next.
    state = await growClones(connection, state, 400, { rowsPerBatch: 100 });
    state = await growClones(connection, state, TARGET, { rowsPerBatch: 250 });
  }, 180_000);
  afterAll(async () => {
    await connection?.close();
    await server?.close();
  });

  it('records the delivered rows as templates and copies them up to the target', () => {
    expect(state.templates).toMatchObject({ notifications: SUBSCRIBERS, jobs: SUBSCRIBERS, messages: SUBSCRIBERS });
    expect(state.templates.execution_details).toBeGreaterThanOrEqual(SUBSCRIBERS);
    expect(state.copies).toBe(TARGET / SUBSCRIBERS - 1);
  });

  it('leaves the tables with the indexes they had (PostgreSQL: dropped before the copies, built again after)', async () => {
    if (connection.dialect !== 'postgres') return;
    expect(indexesBefore.length).toBeGreaterThan(10);
    expect(await indexDefinitions(connection)).toEqual(indexesBefore);
    const [invalid] = await connection.rows<{ n: number | string }>(`select count(*) as n from pg_index x join pg_class t on t.oid = x.indrelid
      join pg_namespace n on n.oid = t.relnamespace where n.nspname = current_schema() and not (x.indisvalid and x.indisready)`);
    expect(Number(invalid!.n)).toBe(0);
  });

  it('lists the seeded messages with exact totals, in order, each once, shaped like a real one', async () => {
    const all = await server.request('GET', '/v1/messages?limit=10');
    expect(all.body.totalCount).toBe(TARGET);
    const bySubscriber = await server.request('GET', '/v1/messages?subscriberId=seed-subscriber-3&limit=10&page=0');
    expect(bySubscriber.body.totalCount).toBe(TARGET / SUBSCRIBERS);
    const seen = new Set<string>();
    let previous = '9999';
    for (let page = 0; page < TARGET / SUBSCRIBERS / 10; page++) {
      const response = await server.request('GET', `/v1/messages?subscriberId=seed-subscriber-3&limit=10&page=${page}`);
      expect(response.status).toBe(200);
      expect(response.body.data).toHaveLength(10);
      for (const message of response.body.data) {
        expect(shapeOf(message)).toEqual(shapeOf(realMessage));
        expect(message._id).toMatch(RECORD_ID);
        expect(message.subscriber.subscriberId).toBe('seed-subscriber-3');
        expect(message.createdAt <= previous).toBe(true);
        previous = message.createdAt;
        seen.add(message._id);
      }
    }
    expect(seen.size).toBe(TARGET / SUBSCRIBERS);
    const deep = (await server.request('GET', '/v1/messages?subscriberId=seed-subscriber-3&limit=10&page=7')).body.data[4];
    expect(deep.transactionId).toMatch(new RegExp(`^${realMessage.transactionId}-s\\d+$`));
    // The id's first 8 hex digits are its creation second, as Herald makes them.
    expect(parseInt(deep._id.slice(0, 8), 16)).toBe(Math.floor(Date.parse(deep.createdAt) / 1000));
  });

  it('keeps a list text for every seeded message, giving the page its columns and document give', async () => {
    const [row] = await connection.rows<{ n: number | string }>(`select count(*) as n from messages where list_text is null`);
    expect(Number(row!.n)).toBe(0);
    const fromTexts = (await server.request('GET', '/v1/messages?subscriberId=seed-subscriber-3&limit=10&page=7')).body;
    const fromColumns = await server.deps.store.messages.list(server.devEnvironmentId, { subscriberId: 'seed-subscriber-3', page: 7, limit: 10 });
    expect(fromTexts.data.map(({ subscriber: _, ...message }: Record<string, unknown>) => message)).toEqual(JSON.parse(messagePageSchemaSerializer(fromColumns)).data);
  });

  it('lists seeded events with their own job and execution details, reachable by id', async () => {
    const deepPage = await server.request('GET', '/v1/notifications?limit=10&page=50');
    expect(deepPage.status).toBe(200);
    expect(deepPage.body.data).toHaveLength(10);
    for (const event of deepPage.body.data) {
      expect(shapeOf(event)).toEqual(shapeOf(realNotification));
      expect(event.transactionId).toMatch(/-s\d+$/);
      for (const job of event.jobs) {
        expect(job._notificationId ?? event._id).toBe(event._id);
        expect(job.executionDetails.length).toBe(realNotification.jobs[0].executionDetails.length);
      }
    }
    const one = deepPage.body.data[3];
    const byId = await server.request('GET', `/v1/notifications/${one._id}`);
    expect(byId.status).toBe(200);
    expect(byId.body.data.transactionId).toBe(one.transactionId);
    const byTransaction = await server.request('GET', `/v1/messages?transactionId=${encodeURIComponent(one.transactionId)}`);
    // One trigger to every subscriber: its copy, like the template, is one transaction of SUBSCRIBERS events.
    expect(byTransaction.body.totalCount).toBe(SUBSCRIBERS);
    expect(byTransaction.body.data.map((message: any) => message._notificationId)).toContain(one._id);
  });
});
