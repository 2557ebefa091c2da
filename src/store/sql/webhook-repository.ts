import { sql, type CompiledQuery, type Kysely, type Selectable } from 'kysely';
import { newId } from '../../domain/ids.js';
import type { DomainEvent, WebhookAttempt, WebhookAttemptStatus, WebhookEndpoint, WebhookEventBody, WebhookSecrets } from '../../domain/webhooks.js';
import type { Clock } from '../../domain/clock.js';
import type { EventOutbox, WebhookAttemptListFilter, WebhookRepository } from '../ports.js';
import type { SecretBox } from '../secret-box.js';
import { fromFlag, fromJson, toFlag, toJson } from './json.js';
import type { Database, WebhookAttemptsTable, WebhookEndpointsTable } from './schema.js';
import type { SqlDialectName } from './sql-store.js';

type EndpointRow = Selectable<WebhookEndpointsTable>;
type AttemptRow = Selectable<WebhookAttemptsTable>;

/**
 * Per process: whether an environment has an enabled endpoint, remembered for `ttlMs` so that recording the events
 * of a change costs a map look-up when nobody listens. Endpoint changes drop the answer at once in every process
 * (announceEndpointsChanged); `trusted()` false (this process may miss those announcements) bypasses the cache.
 */
export class WebhookPresence {
  private readonly known = new Map<string, { value: boolean; until: number }>();
  /** Endpoints with their secrets for the delivery job, by `environmentId:id`. */
  private readonly targets = new Map<string, { value: DeliveryTarget | undefined; until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly trusted: () => boolean = () => true,
  ) {}

  async wanted(environmentId: string, load: () => Promise<boolean>): Promise<boolean> {
    const now = Date.now();
    const cached = this.known.get(environmentId);
    if (cached && cached.until > now && this.trusted()) return cached.value;
    const value = await load();
    if (this.ttlMs > 0) this.known.set(environmentId, { value, until: now + this.ttlMs });
    return value;
  }

  async target(environmentId: string, id: string, load: () => Promise<DeliveryTarget | undefined>): Promise<DeliveryTarget | undefined> {
    const now = Date.now();
    const key = `${environmentId}:${id}`;
    const cached = this.targets.get(key);
    if (cached && cached.until > now && this.trusted()) return cached.value;
    const value = await load();
    if (this.ttlMs > 0) {
      if (this.targets.size >= 10_000) this.targets.clear();
      this.targets.set(key, { value, until: now + this.ttlMs });
    }
    return value;
  }

  forget(environmentId?: string): void {
    if (environmentId === undefined) {
      this.known.clear();
      this.targets.clear();
      return;
    }
    this.known.delete(environmentId);
    for (const key of this.targets.keys()) if (key.startsWith(`${environmentId}:`)) this.targets.delete(key);
  }
}

type DeliveryTarget = { endpoint: WebhookEndpoint; secrets: WebhookSecrets };

export interface SqlWebhookOptions {
  dialect: SqlDialectName;
  secretBox: SecretBox;
  presence: WebhookPresence;
  clock: Clock;
}

/** The outbox over `webhook_events` (see EventOutbox in ports.ts). */
export class SqlEventOutbox implements EventOutbox {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly webhooks: SqlWebhookRepository,
    private readonly options: SqlWebhookOptions,
  ) {}

  wanted(environmentId: string): Promise<boolean> {
    return this.options.presence.wanted(environmentId, () => this.webhooks.hasEnabledEndpoint(environmentId));
  }

  async record(environmentId: string, events: DomainEvent[]): Promise<WebhookEventBody[]> {
    const recorded = await this.recordStatement(environmentId, events);
    if (recorded) await this.db.executeQuery(recorded.statement);
    return recorded?.bodies ?? [];
  }

  /** The insert of `record`, not executed (the held writes of `SqlStore.batch` combine it with others). */
  async recordStatement(environmentId: string, events: DomainEvent[]): Promise<{ statement: CompiledQuery<unknown>; bodies: WebhookEventBody[] } | undefined> {
    if (events.length === 0 || !(await this.wanted(environmentId))) return undefined;
    const now = this.options.clock.now();
    const timestamp = new Date(now).toISOString();
    const bodies = events.map((event): WebhookEventBody => ({ id: newId(now), type: event.type, object: event.object, data: event.data, timestamp, environmentId }));
    const statement = this.db
      .insertInto('webhook_events')
      .values(bodies.map((body) => ({ id: body.id, environment_id: environmentId, type: body.type, body: JSON.stringify(body), dispatched: 0, created_at: timestamp })))
      .compile();
    return { statement, bodies };
  }

  forget(environmentId?: string): void {
    this.options.presence.forget(environmentId);
  }
}

export class SqlWebhookRepository implements WebhookRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: SqlWebhookOptions,
  ) {}

  async createEndpoint(endpoint: WebhookEndpoint, secret: string): Promise<void> {
    await this.db
      .insertInto('webhook_endpoints')
      .values({
        ...this.endpointFields(endpoint),
        id: endpoint._id,
        environment_id: endpoint._environmentId,
        secret_enc: this.options.secretBox.encrypt(secret),
        previous_secret_enc: null,
        previous_secret_expires_at: null,
        created_at: endpoint.createdAt,
        deleted_at: null,
      })
      .execute();
  }

  async getEndpoint(environmentId: string, id: string): Promise<WebhookEndpoint | undefined> {
    const row = await this.live(environmentId).where('id', '=', id).executeTakeFirst();
    return row && this.toEndpoint(row);
  }

  async listEndpoints(environmentId: string, filter: { enabledOnly?: boolean } = {}): Promise<WebhookEndpoint[]> {
    let query = this.live(environmentId);
    if (filter.enabledOnly) query = query.where('enabled', '=', 1);
    const rows = await query.orderBy('created_at').orderBy('id').execute();
    return rows.map((row) => this.toEndpoint(row));
  }

  async hasEnabledEndpoint(environmentId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('webhook_endpoints')
      .select('id')
      .where('environment_id', '=', environmentId)
      .where('enabled', '=', 1)
      .where('deleted_at', 'is', null)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  async saveEndpoint(endpoint: WebhookEndpoint): Promise<boolean> {
    const result = await this.db
      .updateTable('webhook_endpoints')
      .set(this.endpointFields(endpoint))
      .where('environment_id', '=', endpoint._environmentId)
      .where('id', '=', endpoint._id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async deleteEndpoint(environmentId: string, id: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('webhook_endpoints')
      .set({ deleted_at: at, updated_at: at, enabled: 0 })
      .where('environment_id', '=', environmentId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async noteEndpointFailure(environmentId: string, id: string, at: string): Promise<{ failingSince: string | undefined; started: boolean }> {
    const set = await this.db
      .updateTable('webhook_endpoints')
      .set({ failing_since: at })
      .where('environment_id', '=', environmentId)
      .where('id', '=', id)
      .where('failing_since', 'is', null)
      .executeTakeFirst();
    const row = await this.db.selectFrom('webhook_endpoints').select('failing_since').where('environment_id', '=', environmentId).where('id', '=', id).executeTakeFirst();
    return { failingSince: row?.failing_since ?? undefined, started: Number(set.numUpdatedRows) > 0 };
  }

  async clearEndpointFailure(environmentId: string, id: string): Promise<boolean> {
    const result = await this.db
      .updateTable('webhook_endpoints')
      .set({ failing_since: null })
      .where('environment_id', '=', environmentId)
      .where('id', '=', id)
      .where('failing_since', 'is not', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async disableEndpoint(environmentId: string, id: string, reason: string, at: string): Promise<void> {
    await this.db
      .updateTable('webhook_endpoints')
      .set({ enabled: 0, disabled_reason: reason, updated_at: at })
      .where('environment_id', '=', environmentId)
      .where('id', '=', id)
      .execute();
  }

  getDeliveryTarget(environmentId: string, id: string): Promise<DeliveryTarget | undefined> {
    return this.options.presence.target(environmentId, id, async () => {
      const row = await this.live(environmentId).where('id', '=', id).executeTakeFirst();
      if (!row) return undefined;
      return { endpoint: this.toEndpoint(row), secrets: this.secretsOf(row) };
    });
  }

  async getSecrets(environmentId: string, id: string): Promise<WebhookSecrets | undefined> {
    const row = await this.db
      .selectFrom('webhook_endpoints')
      .select(['secret_enc', 'previous_secret_enc', 'previous_secret_expires_at'])
      .where('environment_id', '=', environmentId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return row && this.secretsOf(row);
  }

  private secretsOf(row: Pick<EndpointRow, 'secret_enc' | 'previous_secret_enc' | 'previous_secret_expires_at'>): WebhookSecrets {
    const secrets: WebhookSecrets = { current: this.options.secretBox.decrypt(row.secret_enc) };
    if (row.previous_secret_enc && row.previous_secret_expires_at) {
      secrets.previous = this.options.secretBox.decrypt(row.previous_secret_enc);
      secrets.previousExpiresAt = row.previous_secret_expires_at;
    }
    return secrets;
  }

  async rotateSecret(environmentId: string, id: string, secret: string, previousExpiresAt: string, at: string): Promise<void> {
    await this.db
      .updateTable('webhook_endpoints')
      .set((eb) => ({
        previous_secret_enc: eb.ref('secret_enc'),
        previous_secret_expires_at: previousExpiresAt,
        secret_enc: this.options.secretBox.encrypt(secret),
        updated_at: at,
      }))
      .where('environment_id', '=', environmentId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .execute();
  }

  async createDispatchedEvent(event: WebhookEventBody): Promise<void> {
    await this.db
      .insertInto('webhook_events')
      .values({ id: event.id, environment_id: event.environmentId, type: event.type, body: JSON.stringify(event), dispatched: 1, created_at: event.timestamp })
      .execute();
  }

  async getEvent(environmentId: string, id: string): Promise<WebhookEventBody | undefined> {
    const row = await this.db.selectFrom('webhook_events').select('body').where('environment_id', '=', environmentId).where('id', '=', id).executeTakeFirst();
    return row && (JSON.parse(row.body) as WebhookEventBody);
  }

  async claimUndispatchedEvents(limit: number): Promise<WebhookEventBody[]> {
    // The literal matches the partial index's predicate (see live-rows.ts for why SQLite needs that).
    let query = this.db.selectFrom('webhook_events').select('body').where('dispatched', '=', sql.lit(0)).orderBy('id').limit(limit);
    if (this.options.dialect === 'postgres') query = query.forUpdate().skipLocked();
    const rows = await query.execute();
    return rows.map((row) => JSON.parse(row.body) as WebhookEventBody);
  }

  async markEventsDispatched(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.updateTable('webhook_events').set({ dispatched: 1 }).where('id', 'in', ids).execute();
  }

  async createAttempts(attempts: WebhookAttempt[]): Promise<void> {
    for (let start = 0; start < attempts.length; start += 500) {
      await this.db
        .insertInto('webhook_attempts')
        .values(attempts.slice(start, start + 500).map((attempt) => this.toAttemptRow(attempt)))
        .execute();
    }
  }

  async getAttempt(environmentId: string, id: string): Promise<WebhookAttempt | undefined> {
    const row = await this.db.selectFrom('webhook_attempts').selectAll().where('environment_id', '=', environmentId).where('id', '=', id).executeTakeFirst();
    return row && toAttempt(row);
  }

  async finishAttempts(attempts: WebhookAttempt[]): Promise<string[]> {
    const written: string[] = [];
    for (let start = 0; start < attempts.length; start += 500) {
      // An upsert on existing rows: the only multi-row UPDATE with per-row values that SQLite and PostgreSQL share.
      const rows = await this.db
        .insertInto('webhook_attempts')
        .values(attempts.slice(start, start + 500).map((attempt) => this.toAttemptRow(attempt)))
        .onConflict((oc) =>
          oc
            .column('id')
            .doUpdateSet((eb) => ({
              status: eb.ref('excluded.status'),
              response_status_code: eb.ref('excluded.response_status_code'),
              duration_ms: eb.ref('excluded.duration_ms'),
              response_body_snippet: eb.ref('excluded.response_body_snippet'),
              error: eb.ref('excluded.error'),
              finished_at: eb.ref('excluded.finished_at'),
            }))
            .where('webhook_attempts.status', '=', sql.lit('pending')),
        )
        .returning('id')
        .execute();
      for (const row of rows) written.push(row.id);
    }
    return written;
  }

  async listAttempts(environmentId: string, endpointId: string, filter: WebhookAttemptListFilter): Promise<{ data: WebhookAttempt[]; hasMore: boolean }> {
    let query = this.db.selectFrom('webhook_attempts').selectAll().where('environment_id', '=', environmentId).where('endpoint_id', '=', endpointId);
    if (filter.status) query = query.where('status', '=', filter.status);
    const rows = await query
      .orderBy('id', 'desc')
      .limit(filter.limit + 1)
      .offset(filter.page * filter.limit)
      .execute();
    return { data: rows.slice(0, filter.limit).map(toAttempt), hasMore: rows.length > filter.limit };
  }

  async listFailedEvents(environmentId: string, endpointId: string, since: string): Promise<Array<{ webhookId: string; eventType: string }>> {
    const rows = await this.db
      .selectFrom('webhook_attempts')
      .select(['webhook_id', 'event_type', 'status', 'id'])
      .where('environment_id', '=', environmentId)
      .where('endpoint_id', '=', endpointId)
      .where('created_at', '>=', since)
      .orderBy('id')
      .execute();
    // The latest attempt of each event decides: an event that later succeeded, or is pending, is not failed.
    const latest = new Map<string, { eventType: string; status: string }>();
    for (const row of rows) latest.set(row.webhook_id, { eventType: row.event_type, status: row.status });
    return [...latest].filter(([, value]) => value.status === 'failed').map(([webhookId, value]) => ({ webhookId, eventType: value.eventType }));
  }

  async pruneBefore(before: string, limit: number): Promise<number> {
    // Ids start with their creation second (domain/ids.ts): the primary keys bound the range without another index.
    const boundary = Math.floor(Date.parse(before) / 1000).toString(16).padStart(8, '0');
    const attempts = await this.db
      .deleteFrom('webhook_attempts')
      .where('id', 'in', (eb) => eb.selectFrom('webhook_attempts').select('id').where('id', '<', boundary).where('status', '!=', 'pending').limit(limit))
      .executeTakeFirst();
    const events = await this.db
      .deleteFrom('webhook_events')
      .where('id', 'in', (eb) => eb.selectFrom('webhook_events').select('id').where('id', '<', boundary).where('dispatched', '=', 1).limit(limit))
      .executeTakeFirst();
    return Number(attempts.numDeletedRows) + Number(events.numDeletedRows);
  }

  async listOverdueAttempts(dueBefore: string, limit: number): Promise<WebhookAttempt[]> {
    const rows = await this.db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where('status', '=', sql.lit('pending'))
      .where('due_at', '<', dueBefore)
      .orderBy('due_at')
      .limit(limit)
      .execute();
    return rows.map(toAttempt);
  }

  private live(environmentId: string) {
    return this.db.selectFrom('webhook_endpoints').selectAll().where('environment_id', '=', environmentId).where('deleted_at', 'is', null);
  }

  private endpointFields(endpoint: WebhookEndpoint) {
    return {
      url: endpoint.url,
      description: endpoint.description,
      event_types: toJson(endpoint.eventTypes),
      enabled: toFlag(endpoint.enabled),
      headers_enc: this.options.secretBox.encryptJson(endpoint.headers),
      disabled_reason: endpoint.disabledReason ?? null,
      failing_since: endpoint.failingSince ?? null,
      updated_at: endpoint.updatedAt,
    };
  }

  private toEndpoint(row: EndpointRow): WebhookEndpoint {
    const endpoint: WebhookEndpoint = {
      _id: row.id,
      _environmentId: row.environment_id,
      url: row.url,
      description: row.description,
      eventTypes: fromJson<string[]>(row.event_types, []),
      enabled: fromFlag(row.enabled),
      headers: this.options.secretBox.decryptJson<Record<string, string>>(row.headers_enc),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
    if (row.disabled_reason) endpoint.disabledReason = row.disabled_reason;
    if (row.failing_since) endpoint.failingSince = row.failing_since;
    return endpoint;
  }

  private toAttemptRow(attempt: WebhookAttempt): WebhookAttemptsTable {
    return {
      id: attempt._id,
      environment_id: attempt._environmentId,
      endpoint_id: attempt._endpointId,
      webhook_id: attempt.webhookId,
      event_type: attempt.eventType,
      attempt: attempt.attempt,
      status: attempt.status,
      response_status_code: attempt.responseStatusCode ?? null,
      duration_ms: attempt.durationMs,
      response_body_snippet: attempt.responseBodySnippet,
      error: attempt.error ?? null,
      due_at: attempt.dueAt,
      created_at: attempt.createdAt,
      finished_at: attempt.finishedAt ?? null,
    };
  }
}

function toAttempt(row: AttemptRow): WebhookAttempt {
  const attempt: WebhookAttempt = {
    _id: row.id,
    _environmentId: row.environment_id,
    _endpointId: row.endpoint_id,
    webhookId: row.webhook_id,
    eventType: row.event_type,
    attempt: Number(row.attempt),
    status: row.status as WebhookAttemptStatus,
    durationMs: Number(row.duration_ms),
    responseBodySnippet: row.response_body_snippet,
    dueAt: row.due_at,
    createdAt: row.created_at,
  };
  if (row.response_status_code !== null) attempt.responseStatusCode = Number(row.response_status_code);
  if (row.error) attempt.error = row.error;
  if (row.finished_at) attempt.finishedAt = row.finished_at;
  return attempt;
}
