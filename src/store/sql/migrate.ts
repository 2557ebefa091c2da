import { Migrator, sql, type Kysely } from 'kysely';
import { migrationProvider } from './migrations.js';
import type { Database } from './schema.js';

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
  // Unordered: a migration numbered in a gap (0025 shipped after 0026-0029) still runs on a database that already ran
  // the later ones; without it Kysely refuses such a database. Migrations stay independent of each other's order.
  const migrator = new Migrator({ db, provider: migrationProvider, migrationTableSchema, allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
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
  const migrations = await new Migrator({ db, provider: migrationProvider, migrationTableSchema, allowUnorderedMigrations: true }).getMigrations();
  return migrations.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name);
}
