import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Kysely, PostgresDialect, type CompiledQuery } from 'kysely';
import { afterAll, beforeAll } from 'vitest';
import { migrateToLatest } from '../../src/store/sql/migrate.js';
import type { Database } from '../../src/store/sql/schema.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { SqlStore } from '../../src/store/sql/sql-store.js';
import { createTestSchema, type TestSchema } from './databases.js';

export interface RecordingPostgresStore {
  /** One connection: the statements the store sends and genericPlanOf's PREPARE share it. */
  pool: pg.Pool;
  db: Kysely<Database>;
  store: SqlStore;
  /** Every statement sent since the last `clear()`, in order. */
  sent: CompiledQuery[];
  clear(): void;
}

/**
 * The set-up of a PostgreSQL plan test, called inside its describe: a migrated schema of its own behind a one-connection
 * pool, a store over it, and the statements the store sends, recorded so the test can plan exactly what was sent.
 * `seed` runs once after the migration. The returned function gives the set-up once beforeAll has run.
 */
export function recordingPostgresStore(seed?: (db: Kysely<Database>) => Promise<void>): () => RecordingPostgresStore {
  let schema: TestSchema | undefined;
  let recording: RecordingPostgresStore | undefined;
  beforeAll(async () => {
    schema = await createTestSchema();
    const pool = new pg.Pool({ connectionString: schema.url, max: 1 });
    const sent: CompiledQuery[] = [];
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: (event) => void (event.level === 'query' && sent.push(event.query)) });
    await migrateToLatest(db, 'postgres');
    await seed?.(db);
    recording = { pool, db, store: new SqlStore(db, { dialect: 'postgres', secretBox: new SecretBox(randomBytes(32)) }), sent, clear: () => void (sent.length = 0) };
  }, 60_000);
  afterAll(async () => {
    await recording?.db.destroy();
    await schema?.drop();
  });
  return () => recording!;
}
