import { sql, type Kysely, type Selectable } from 'kysely';
import type { ApiKeyInfo, AuditEntry, AuditActorKind, DashboardSessionRecord, OneTimeToken, OneTimeTokenKind, StoredUser } from '../../domain/dashboard.js';
import type { Organization, Page, UserRole } from '../../domain/types.js';
import type { DashboardRepository } from '../ports.js';
import type { Database } from './schema.js';

/** Finished sign-in windows are deleted at most this often. */
const PRUNE_INTERVAL_MS = 60_000;

export class SqlDashboardRepository implements DashboardRepository {
  private lastPruneAt = 0;

  constructor(private readonly db: Kysely<Database>) {}

  async getOrganization(id: string): Promise<Organization | undefined> {
    const row = await this.db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
    return row && { _id: row.id, name: row.name, createdAt: row.created_at };
  }

  async firstOrganization(): Promise<Organization | undefined> {
    const row = await this.db.selectFrom('organizations').selectAll().orderBy('created_at').orderBy('id').limit(1).executeTakeFirst();
    return row && { _id: row.id, name: row.name, createdAt: row.created_at };
  }

  // ---- users

  async countUsers(): Promise<number> {
    const row = await this.db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
    return Number(row.count);
  }

  async createUser(user: StoredUser): Promise<boolean> {
    const result = await this.db
      .insertInto('users')
      .values({
        id: user._id,
        organization_id: user._organizationId,
        email: user.email,
        name: user.name ?? null,
        role: user.role,
        password_hash: user.passwordHash,
        created_at: user.createdAt,
        updated_at: user.updatedAt,
      })
      .onConflict((oc) => oc.column('email').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async getUser(organizationId: string, id: string): Promise<StoredUser | undefined> {
    const row = await this.db.selectFrom('users').selectAll().where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst();
    return row && toUser(row);
  }

  async findUserByEmail(email: string): Promise<StoredUser | undefined> {
    const row = await this.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
    return row && toUser(row);
  }

  async listUsers(organizationId: string): Promise<StoredUser[]> {
    const rows = await this.db.selectFrom('users').selectAll().where('organization_id', '=', organizationId).orderBy('created_at').orderBy('id').execute();
    return rows.map(toUser);
  }

  async countAdmins(organizationId: string): Promise<number> {
    const row = await this.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('organization_id', '=', organizationId)
      .where('role', '=', 'admin')
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  async updateUser(
    organizationId: string,
    id: string,
    patch: { role?: UserRole; name?: string | null; passwordHash?: string; updatedAt: string },
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('users')
      .set({
        updated_at: patch.updatedAt,
        ...(patch.role !== undefined ? { role: patch.role } : {}),
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(patch.passwordHash !== undefined ? { password_hash: patch.passwordHash } : {}),
      })
      .where('id', '=', id)
      .where('organization_id', '=', organizationId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async deleteUser(organizationId: string, id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('users').where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst();
    if (Number(result.numDeletedRows) !== 1) return false;
    await this.deleteSessionsOfUser(id);
    return true;
  }

  // ---- sessions

  async createSession(session: DashboardSessionRecord): Promise<void> {
    await this.db
      .insertInto('dashboard_sessions')
      .values({ token_hash: session.tokenHash, user_id: session.userId, created_at: session.createdAt, expires_at: session.expiresAt })
      .execute();
  }

  async findSession(tokenHash: string, now: string): Promise<{ session: DashboardSessionRecord; user: StoredUser } | undefined> {
    const row = await this.db
      .selectFrom('dashboard_sessions')
      .innerJoin('users', 'users.id', 'dashboard_sessions.user_id')
      .selectAll('users')
      .select(['dashboard_sessions.created_at as session_created_at', 'dashboard_sessions.expires_at as session_expires_at'])
      .where('dashboard_sessions.token_hash', '=', tokenHash)
      .where('dashboard_sessions.expires_at', '>', now)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      session: { tokenHash, userId: row.id, createdAt: row.session_created_at, expiresAt: row.session_expires_at },
      user: toUser(row),
    };
  }

  async deleteSession(tokenHash: string): Promise<void> {
    await this.db.deleteFrom('dashboard_sessions').where('token_hash', '=', tokenHash).execute();
  }

  async deleteSessionsOfUser(userId: string): Promise<void> {
    await this.db.deleteFrom('dashboard_sessions').where('user_id', '=', userId).execute();
  }

  // ---- one-time links

  async createToken(token: OneTimeToken): Promise<void> {
    await this.db
      .insertInto('dashboard_tokens')
      .values({
        id: token._id,
        token_hash: token.tokenHash,
        kind: token.kind,
        organization_id: token.organizationId ?? null,
        role: token.role ?? null,
        email: token.email ?? null,
        created_by: token.createdBy ?? null,
        created_at: token.createdAt,
        expires_at: token.expiresAt,
        used_at: null,
        revoked_at: null,
      })
      .execute();
  }

  async consumeToken(tokenHash: string, kind: OneTimeTokenKind, now: string): Promise<OneTimeToken | undefined> {
    const row = await this.db
      .updateTable('dashboard_tokens')
      .set({ used_at: now })
      .where('token_hash', '=', tokenHash)
      .where('kind', '=', kind)
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .returningAll()
      .executeTakeFirst();
    return row && { ...toToken(row), usedAt: undefined };
  }

  async listOpenInvites(organizationId: string): Promise<OneTimeToken[]> {
    const rows = await this.db
      .selectFrom('dashboard_tokens')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('kind', '=', 'invite')
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    return rows.map(toToken);
  }

  async revokeInvite(organizationId: string, id: string, now: string): Promise<boolean> {
    const result = await this.db
      .updateTable('dashboard_tokens')
      .set({ revoked_at: now })
      .where('id', '=', id)
      .where('organization_id', '=', organizationId)
      .where('kind', '=', 'invite')
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  // ---- sign-in attempts

  async countLoginAttempt(key: string, windowStart: string): Promise<number> {
    const row = await this.db
      .insertInto('login_attempts')
      .values({ key, window_start: windowStart, count: 1 })
      .onConflict((oc) => oc.columns(['key', 'window_start']).doUpdateSet({ count: sql<number>`login_attempts.count + 1` }))
      .returning('count')
      .executeTakeFirstOrThrow();
    await this.pruneAttempts(windowStart);
    return Number(row.count);
  }

  async clearLoginAttempts(key: string): Promise<void> {
    await this.db.deleteFrom('login_attempts').where('key', '=', key).execute();
  }

  /** Only the current window is ever counted; older ones are dropped now and then. */
  private async pruneAttempts(windowStart: string): Promise<void> {
    const now = Date.now();
    if (now - this.lastPruneAt < PRUNE_INTERVAL_MS) return;
    this.lastPruneAt = now;
    await this.db.deleteFrom('login_attempts').where('window_start', '<', windowStart).execute();
  }

  // ---- secret keys

  async describeApiKey(id: string, details: { last4: string; createdBy?: string }): Promise<void> {
    await this.db.updateTable('api_keys').set({ hint: details.last4, created_by: details.createdBy ?? null }).where('id', '=', id).execute();
  }

  async listApiKeys(environmentId: string): Promise<ApiKeyInfo[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .select(['id', 'environment_id', 'hint', 'created_at', 'created_by', 'revoked_at'])
      .where('environment_id', '=', environmentId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    return rows.map((row) => ({
      _id: row.id,
      _environmentId: row.environment_id,
      ...(row.hint ? { last4: row.hint } : {}),
      createdAt: row.created_at,
      ...(row.created_by ? { createdBy: row.created_by } : {}),
      ...(row.revoked_at ? { revokedAt: row.revoked_at } : {}),
    }));
  }

  async revokeApiKey(environmentId: string, id: string, now: string): Promise<{ keyHash: string } | undefined> {
    const row = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: now })
      .where('id', '=', id)
      .where('environment_id', '=', environmentId)
      .where('revoked_at', 'is', null)
      .returning('key_hash')
      .executeTakeFirst();
    return row && { keyHash: row.key_hash };
  }

  // ---- audit log

  async appendAudit(entry: AuditEntry): Promise<void> {
    await this.db
      .insertInto('audit_log')
      .values({
        id: entry._id,
        organization_id: entry._organizationId,
        environment_id: entry._environmentId ?? null,
        actor_kind: entry.actor.kind,
        actor_id: entry.actor.id ?? null,
        actor_label: entry.actor.label ?? null,
        action: entry.action,
        target_type: entry.target?.type ?? null,
        target_id: entry.target?.id ?? null,
        outcome: entry.outcome,
        ip: entry.ip ?? null,
        created_at: entry.createdAt,
      })
      .execute();
  }

  async listAudit(organizationId: string, page: number, limit: number): Promise<Page<AuditEntry>> {
    const rows = await this.db
      .selectFrom('audit_log')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .offset(page * limit)
      .execute();
    return { data: rows.slice(0, limit).map(toAuditEntry), page, pageSize: limit, hasMore: rows.length > limit };
  }
}

function toUser(row: Selectable<Database['users']>): StoredUser {
  return {
    _id: row.id,
    _organizationId: row.organization_id,
    email: row.email,
    ...(row.name ? { name: row.name } : {}),
    role: row.role as UserRole,
    passwordHash: row.password_hash,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toToken(row: Selectable<Database['dashboard_tokens']>): OneTimeToken {
  return {
    _id: row.id,
    tokenHash: row.token_hash,
    kind: row.kind as OneTimeTokenKind,
    ...(row.organization_id ? { organizationId: row.organization_id } : {}),
    ...(row.role ? { role: row.role as UserRole } : {}),
    ...(row.email ? { email: row.email } : {}),
    ...(row.created_by ? { createdBy: row.created_by } : {}),
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    ...(row.used_at ? { usedAt: row.used_at } : {}),
    ...(row.revoked_at ? { revokedAt: row.revoked_at } : {}),
  };
}

function toAuditEntry(row: Selectable<Database['audit_log']>): AuditEntry {
  return {
    _id: row.id,
    _organizationId: row.organization_id,
    ...(row.environment_id ? { _environmentId: row.environment_id } : {}),
    actor: {
      kind: row.actor_kind as AuditActorKind,
      ...(row.actor_id ? { id: row.actor_id } : {}),
      ...(row.actor_label ? { label: row.actor_label } : {}),
    },
    action: row.action,
    ...(row.target_type && row.target_id ? { target: { type: row.target_type, id: row.target_id } } : {}),
    outcome: row.outcome as 'success' | 'failure',
    ...(row.ip ? { ip: row.ip } : {}),
    createdAt: row.created_at,
  };
}
