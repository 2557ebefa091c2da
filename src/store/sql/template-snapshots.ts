import { createHash } from 'node:crypto';
import type { CompiledQuery, Kysely } from 'kysely';
import { isDeepFrozen } from '../../domain/deep-freeze.js';
import { TEMPLATE_SNAPSHOT_ID_LENGTH } from '../../domain/stored-message.js';
import type { Database } from './schema.js';
import { chunks } from './subscriber-repository.js';

/** Snapshot texts kept in memory; past this many the cache starts over (there is one per workflow version). */
const CACHED_TEXTS_MAX = 500;

/**
 * The workflow snapshots messages reference (message_templates, migration 0031), one per process, shared by the
 * store's transaction-bound copies. A snapshot's id is a hash of its text, so a text read once is valid forever and
 * rows are never rewritten; they are never deleted either, so a row seen (read, or inserted outside a transaction)
 * stays known to exist and is not written again by this process.
 */
export class TemplateSnapshots {
  private readonly texts = new Map<string, string>();
  /** Ids whose row is known to be committed. */
  private readonly stored = new Set<string>();
  /** Texts met by idOf whose row is not known to exist yet. */
  private readonly pending = new Map<string, string>();
  /** The last snapshot object hashed, and its id: a page or a batch of messages shares one workflow's snapshot. */
  private lastText = '';
  private lastId = '';

  /** Deep-frozen snapshot objects met by idOfTemplate: their text and id, which cannot change. */
  private readonly frozen = new WeakMap<object, { id: string; text: string }>();

  /** The id of a snapshot given as its JSON text; remembers the text, to be written by `save` before the message. */
  private idOf(text: string): string {
    let id = text === this.lastText ? this.lastId : undefined;
    if (id === undefined) {
      id = createHash('sha256').update(text).digest('hex').slice(0, TEMPLATE_SNAPSHOT_ID_LENGTH);
      this.lastText = text;
      this.lastId = id;
    }
    this.met(id, text);
    return id;
  }

  /**
   * idOf of a snapshot given as its object. A deep-frozen one (the template the messages of a cached workflow share,
   * workflowTemplateOf) is stringified and hashed the first time only: after that its id is found by the object.
   */
  idOfTemplate(template: object): string {
    const known = this.frozen.get(template);
    if (known !== undefined) {
      this.met(known.id, known.text);
      return known.id;
    }
    const text = JSON.stringify(template);
    const id = this.idOf(text);
    if (Object.isFrozen(template) && isDeepFrozen(template)) this.frozen.set(template, { id, text });
    return id;
  }

  /**
   * Writes the snapshots of `ids` not known to exist (insert, or nothing when a row is there), before the messages
   * that reference them. Outside a transaction the row is then committed and known; inside one it may still be rolled
   * back, so it is written again next time.
   */
  async save(db: Kysely<Database>, ids: Iterable<string>): Promise<void> {
    const rows: Array<{ id: string; text: string }> = [];
    for (const id of new Set(ids)) {
      if (this.stored.has(id)) continue;
      const text = this.pending.get(id) ?? this.texts.get(id);
      if (text === undefined) throw new Error(`message template snapshot ${id}: its text is not known`);
      rows.push({ id, text });
    }
    if (rows.length === 0) return;
    for (const batch of chunks(rows, 100)) {
      await db.insertInto('message_templates').values(batch).onConflict((conflict) => conflict.column('id').doNothing()).execute();
    }
    if (db.isTransaction) return;
    for (const { id } of rows) {
      this.stored.add(id);
      this.pending.delete(id);
    }
  }

  /** The texts of `ids` (read from the database when not in memory); an id without a row is left out. */
  async load(db: Kysely<Database>, ids: Iterable<string>): Promise<Map<string, string>> {
    const { found, missing } = this.inMemory(ids);
    for (const batch of chunks(missing, 100)) {
      const rows = await db.selectFrom('message_templates').select(['id', 'text']).where('id', 'in', batch).execute();
      // Known to exist once read outside a transaction; inside one the row may be the transaction's own, not yet committed.
      for (const row of rows) this.found(found, row, !db.isTransaction);
    }
    return found;
  }

  /**
   * load inside a synchronous block (SnapshotReader, `db` outside a transaction): the texts in memory, the others by
   * `read` in one statement per 100.
   */
  loadTogether(db: Kysely<Database>, ids: Iterable<string>, read: <T>(query: CompiledQuery<T>) => T[]): Map<string, string> {
    const { found, missing } = this.inMemory(ids);
    for (const batch of chunks(missing, 100)) {
      for (const row of read(db.selectFrom('message_templates').select(['id', 'text']).where('id', 'in', batch).compile())) this.found(found, row, true);
    }
    return found;
  }

  /** The texts of `ids` held in memory, and the ids to read. */
  private inMemory(ids: Iterable<string>): { found: Map<string, string>; missing: string[] } {
    const found = new Map<string, string>();
    const missing: string[] = [];
    for (const id of new Set(ids)) {
      const text = this.texts.get(id);
      if (text !== undefined) found.set(id, text);
      else missing.push(id);
    }
    return { found, missing };
  }

  /** A row read: its text found and remembered; `committed`, its row known to exist from now on. */
  private found(found: Map<string, string>, row: { id: string; text: string }, committed: boolean): void {
    found.set(row.id, row.text);
    this.remember(row.id, row.text);
    if (committed) this.stored.add(row.id);
  }

  /** A snapshot a message references: to be written by `save` unless its row is known to exist. */
  private met(id: string, text: string): void {
    if (!this.stored.has(id)) this.pending.set(id, text);
    this.remember(id, text);
  }

  private remember(id: string, text: string): void {
    if (this.texts.has(id)) return;
    if (this.texts.size >= CACHED_TEXTS_MAX) this.texts.clear();
    this.texts.set(id, text);
  }
}
