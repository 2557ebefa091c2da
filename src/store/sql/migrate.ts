import { Migrator, sql, type DatabaseIntrospector, type Kysely, type MigrationProvider, type SchemaMetadata, type TableMetadata } from 'kysely';
import { migrationProvider } from './migrations.js';
import type { Database } from './schema.js';

/**
 * Brings the schema up to date; throws with the failing migration's name on error.
 * On PostgreSQL the migration bookkeeping tables live in the connection's current schema: Kysely
 * otherwise looks for them across every schema, and a second Herald in another schema of the same
 * database (tests, or two deployments) would find the first one's tables.
 */
export async function migrateToLatest(db: Kysely<Database>, dialect: 'sqlite' | 'postgres' = 'sqlite'): Promise<string[]> {
  const { error, results } = await (await migratorFor(db, dialect)).migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error) {
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Migrations not yet applied to this database, by name, without applying any (`herald doctor`). */
export async function pendingMigrations(db: Kysely<Database>, dialect: 'sqlite' | 'postgres' = 'sqlite'): Promise<string[]> {
  const migrations = await (await migratorFor(db, dialect)).getMigrations();
  return migrations.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name);
}

/** A Migrator of `provider`'s migrations (Herald's own by default; tests pass a prefix of them) for `db`. */
export async function migratorFor(db: Kysely<any>, dialect: 'sqlite' | 'postgres', provider: MigrationProvider = migrationProvider): Promise<Migrator> {
  if (dialect !== 'postgres') return new Migrator({ db, provider });
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema ?? undefined;
  return new Migrator({ db: withCurrentSchemaIntrospection(db), provider, migrationTableSchema: schema });
}

/**
 * `db`, whose `introspection` sees the current schema only. The Migrator asks it whether its schema and tables exist;
 * Kysely's own PostgreSQL introspector answers by reading every column of every table of the database and calling
 * `has_schema_privilege` and `pg_get_serial_sequence` by name on each, so a schema dropped meanwhile by anyone else on
 * the database (other deployments, parallel tests) fails the migration with "schema … does not exist", and its cost
 * grows with the whole database. Everything else is `db`'s own (methods bound to it: Kysely keeps private fields).
 */
function withCurrentSchemaIntrospection<T>(db: Kysely<T>): Kysely<T> {
  const introspection: DatabaseIntrospector = {
    async getSchemas(): Promise<SchemaMetadata[]> {
      const { rows } = await sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace where nspname = current_schema()`.execute(db);
      return rows;
    },
    async getTables(): Promise<TableMetadata[]> {
      const { rows } = await sql<{ name: string; schema: string; kind: string }>`
        select c.relname as name, n.nspname as schema, c.relkind as kind from pg_catalog.pg_class c
        join pg_catalog.pg_namespace n on n.oid = c.relnamespace
        where n.nspname = current_schema() and c.relkind in ('r', 'v', 'p')`.execute(db);
      return rows.map((row) => ({ name: row.name, schema: row.schema, isView: row.kind === 'v', columns: [] }));
    },
    async getMetadata() {
      return { tables: await this.getTables() };
    },
  };
  return new Proxy(db, {
    get(target, property) {
      if (property === 'introspection') return introspection;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
