import { Migrator, sql, type Kysely } from 'kysely';
import { migrationProvider } from './migrations.js';
import type { Database } from './schema.js';

/**
 * Kysely's migrator finds its own tables by listing the tables of every schema in the database, which PostgreSQL
 * fails with "schema ... does not exist" (3F000) when another schema is dropped during the listing (parallel test
 * files, another deployment's clean-up in the same database). No migration has run then: the caller asks again.
 */
function otherSchemaDropped(error: unknown, ownSchema: string | undefined): boolean {
  if (!ownSchema || (error as { code?: unknown } | undefined)?.code !== '3F000') return false;
  return !(error instanceof Error && error.message.includes(`"${ownSchema}"`));
}

/**
 * Brings the schema up to date; throws with the failing migration's name on error.
 * On PostgreSQL the migration bookkeeping tables live in the connection's current schema: Kysely
 * otherwise looks for them across every schema, and a second Herald in another schema of the same
 * database (tests, or two deployments) would find the first one's tables.
 */
export async function migrateToLatest(db: Kysely<Database>, dialect: 'sqlite' | 'postgres' = 'sqlite'): Promise<string[]> {
  let migrationTableSchema: string | undefined;
  if (dialect === 'postgres') {
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
    migrationTableSchema = rows[0]?.schema;
  }
  const migrator = new Migrator({ db, provider: migrationProvider, migrationTableSchema });
  let outcome = await migrator.migrateToLatest();
  for (let attempt = 1; attempt < 5 && otherSchemaDropped(outcome.error, migrationTableSchema); attempt++) outcome = await migrator.migrateToLatest();
  const { error, results } = outcome;
  const failed = results?.find((r) => r.status === 'Error');
  if (error) {
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Migrations not yet applied to this database, by name, without applying any (`herald doctor`). */
export async function pendingMigrations(db: Kysely<Database>, dialect: 'sqlite' | 'postgres' = 'sqlite'): Promise<string[]> {
  let migrationTableSchema: string | undefined;
  if (dialect === 'postgres') {
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
    migrationTableSchema = rows[0]?.schema;
  }
  const migrator = new Migrator({ db, provider: migrationProvider, migrationTableSchema });
  for (let attempt = 1; ; attempt++) {
    try {
      const migrations = await migrator.getMigrations();
      return migrations.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name);
    } catch (error) {
      if (attempt >= 5 || !otherSchemaDropped(error, migrationTableSchema)) throw error;
    }
  }
}
