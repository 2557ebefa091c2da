import type { CompiledQuery, QueryResult } from 'kysely';
import type { DomainEvent, WebhookEventBody } from '../../domain/webhooks.js';
import type { ExecutionDetail, Message, NotificationEvent, Subscriber } from '../../domain/types.js';
import type { EventOutbox, JobRepository, MessageRepository, NotificationRepository, SubscriberPreferenceRepository, Store, StoredJob, SubscriberRepository, TriggerRecord, TriggerRepository } from '../ports.js';
import { endedStepOf, jobInsertStatements, overviewOutcomeOf } from './job-repository.js';
import { ONE_STATEMENT_MAX_PARAMETERS } from './notification-repository.js';
import { oneStatement, type NamedStatement } from './one-statement.js';
import { stepOutcomeStatementsForNewJob, stepOutcomeSumsForNewJob } from './overview-repository.js';
import type { AddAtCommit, CommitSums, SynchronousWriter } from './snapshot-reads.js';
import type { SqlStore } from './sql-store.js';

/**
 * The Store of `SqlStore.batch`. A new event and its jobs (`notifications.createWithJobs`) are held in
 * memory; a `jobs.save` of one of those jobs changes the held row (and adds its execution detail) instead of updating;
 * `messages.create` of a held job's message, `subscribers.create`, `events.record` and `triggers.setState` are held as
 * statements (a subscriber's without ON CONFLICT: one created meanwhile fails the whole write);
 * `notifications.keepText` of a held event renders its list text at flush, written last (see keepEventText); `flush`
 * writes everything in one statement on PostgreSQL, so one round trip and one commit, and on SQLite as one
 * synchronous block (`SynchronousWriter`: one savepoint, one wait for the group commit; an explicit transaction around
 * the step instead held every other statement of the process while the step ran, BENCHMARKS.md session 13). Each job
 * is inserted once, in the status it reached (an insert and then a status update wrote every index of `jobs` twice).
 * Reads go to the database and do not see the held writes. A write this store cannot hold in order (a save or message
 * of a job that is not held, a lock) throws, so nothing is written out of order: the caller's `work` then fails
 * before `flush`.
 */
export class HeldWrites {
  private readonly events: Array<{ event: NotificationEvent; jobs: StoredJob[] }> = [];
  private readonly jobs = new Map<string, { job: StoredJob; details: ExecutionDetail[] }>();
  /** Statements after the inserts of events and jobs, in call order. */
  private readonly after: Held[] = [];
  /** Inserts of subscribers a trigger names for the first time. */
  private readonly subscribers: Array<CompiledQuery<unknown>> = [];
  private readonly createdSubscribers = new Set<string>();
  /** Ids besides the held events' own that must be free (createWithJobsIfIdsFree): a guard statement each. */
  private readonly mustBeFree: string[] = [];
  private messages = 0;
  /** keepText of held events: their kept texts, written last (on SQLite after the inserts whose triggers clear them). */
  private readonly texts = new Map<string, (event: NotificationEvent) => string | undefined>();
  readonly store: Store;
  /** The held store's own repositories (its getters read them). */
  private readonly repositories: Record<PropertyKey, unknown>;

  private holdsTextOf(environmentId: string, id: string): boolean {
    return this.events.some(({ event }) => event._id === id && event._environmentId === environmentId);
  }

  /**
   * @param writer SQLite: writes what is held as one synchronous block (a savepoint and one wait for the group commit)
   *   instead of one statement.
   */
  constructor(
    private readonly base: SqlStore,
    private readonly writer?: SynchronousWriter,
  ) {
    // The held repositories inherit from prototypes made once per base store (HeldWrites.prototypesOf) and find this
    // batch through HELD: made per batch with Object.create's property descriptors and a closure per method, they
    // cost ~6 µs a delivery (BENCHMARKS.md session 29).
    const prototypes = HeldWrites.prototypesOf(base, writer !== undefined);
    const repositories = {} as Record<PropertyKey, unknown>;
    for (const name of HELD_REPOSITORIES) {
      const repository = Object.create(prototypes[name]) as Record<PropertyKey, unknown>;
      repository[HELD] = this;
      repositories[name] = repository;
    }
    this.repositories = repositories;
    const store = Object.create(prototypes.store) as Record<PropertyKey, unknown>;
    store[HELD] = this;
    this.store = store as unknown as Store;
  }

  private static readonly prototypes = new WeakMap<SqlStore, Partial<Record<'withWriter' | 'withoutWriter', HeldPrototypes>>>();

  private static prototypesOf(base: SqlStore, withWriter: boolean): HeldPrototypes {
    let byWriter = HeldWrites.prototypes.get(base);
    if (!byWriter) HeldWrites.prototypes.set(base, (byWriter = {}));
    const key = withWriter ? 'withWriter' : 'withoutWriter';
    const made = byWriter[key];
    // Made again if a repository of the base store was replaced since (the prototypes inherit from those they saw).
    if (made && HELD_REPOSITORIES.every((name) => Object.getPrototypeOf(made[name]) === base[name])) return made;
    return (byWriter[key] = HeldWrites.makePrototypes(base, withWriter));
  }

  /** The held store's overrides, as methods that find their batch through `this[HELD]`. */
  private static makePrototypes(base: SqlStore, withWriter: boolean): HeldPrototypes {
    const heldOf = (repository: unknown): HeldWrites => (repository as Record<PropertyKey, HeldWrites>)[HELD]!;
    const methods = <T extends object>(inherited: T, own: Record<string, (this: T, ...args: never[]) => unknown>): T => {
      const prototype = Object.create(inherited) as T;
      for (const [name, value] of Object.entries(own)) Object.defineProperty(prototype, name, { value });
      return prototype;
    };
    async function createWithJobs(this: NotificationRepository, event: NotificationEvent, jobs: StoredJob[]): Promise<void> {
      const held = heldOf(this);
      held.events.push({ event, jobs });
      for (const job of jobs) held.jobs.set(job._id, { job, details: [] });
    }
    const notifications = methods<NotificationRepository>(base.notifications, {
      createWithJobs,
      // PostgreSQL's one statement: the event's insert fails on its primary key, and a guard per other id (SQLite's
      // block does not have it: there a look-up costs no round trip).
      ...(withWriter
        ? {}
        : {
            async createWithJobsIfIdsFree(this: NotificationRepository, event: NotificationEvent, jobs: StoredJob[], otherIds: string[]) {
              heldOf(this).mustBeFree.push(...otherIds);
              await createWithJobs.call(this, event, jobs);
            },
          }),
      // Rendered at flush from the held event and its jobs as saved last: only for an event held here. SQLite writes it
      // last in the block (after the inserts whose triggers clear it); PostgreSQL in the held statement, with the print
      // of the rows that statement writes (createWithJobsAndTextStatements), instead of reading them back after it.
      keepsTextWithHeldWrites(this: NotificationRepository, environmentId: string, id: string) {
        return heldOf(this).holdsTextOf(environmentId, id);
      },
      async keepText(this: NotificationRepository, environmentId: string, id: string, render: (event: NotificationEvent) => string | undefined) {
        const held = heldOf(this);
        if (!held.holdsTextOf(environmentId, id)) throw new Error(`held writes: event ${id}'s text cannot be kept with the held writes`);
        held.texts.set(id, render);
      },
    });
    const jobs = methods<JobRepository>(base.jobs, {
      async save(this: JobRepository, job: StoredJob, detail?: ExecutionDetail) {
        const entry = heldOf(this).jobs.get(job._id);
        if (!entry) throw new Error(`held writes: job ${job._id} is not held`);
        // The step code changes the object it loaded, which is the held one; a copy replaces it.
        entry.job = job;
        if (detail) entry.details.push(detail);
      },
    });
    const messages = methods<MessageRepository>(base.messages, {
      async create(this: MessageRepository, message: Message) {
        const held = heldOf(this);
        // A held job is new, so it has no message yet: the insert cannot conflict on the job.
        if (!message._jobId || !held.jobs.has(message._jobId)) throw new Error(`held writes: message of job ${message._jobId} is not held`);
        if (held.messages > 0) throw new Error('held writes: one message per batch');
        held.messages += 1;
        const statements = await base.messages.createStatements(message);
        if ('counters' in statements) held.after.push(statements.inserted, statements.counters);
        else {
          // SQLite's block: the counters are added at the commit, summed with the other blocks' (CommitSums).
          const sums = base.messages.counterSums;
          const add = statements.counterRows.map((row) => ({ sums, key: `${row.environment_id}\n${row.scope}\n${row.shard}`, row, count: row.count }));
          held.after.push(statements.inserted, { add });
        }
        return { message, created: true };
      },
    });
    const events = methods<EventOutbox>(base.events, {
      async record(this: EventOutbox, environmentId: string, domainEvents: DomainEvent[]): Promise<WebhookEventBody[]> {
        const recorded = await base.events.recordStatement(environmentId, domainEvents);
        if (recorded) heldOf(this).after.push(recorded.statement);
        return recorded?.bodies ?? [];
      },
    });
    const subscribers = methods<SubscriberRepository>(base.subscribers, {
      async create(this: SubscriberRepository, subscriber: Subscriber) {
        const held = heldOf(this);
        // Inserted with the event that names it: a subscriberId created meanwhile by another run fails the write.
        const { statement, stored } = base.subscribers.createStatement(subscriber);
        held.subscribers.push(statement);
        held.createdSubscribers.add(subscriber._id);
        return stored;
      },
    });
    const preferences = methods<SubscriberPreferenceRepository>(base.preferences, {
      // A subscriber created by this write has a new id, which no preference names: nothing to read.
      async getForDelivery(this: SubscriberPreferenceRepository, environmentId: string, subscriberInternalId: string, workflowInternalId: string) {
        return heldOf(this).createdSubscribers.has(subscriberInternalId) ? {} : base.preferences.getForDelivery(environmentId, subscriberInternalId, workflowInternalId);
      },
    });
    const triggers = methods<TriggerRepository>(base.triggers, {
      async setState(this: TriggerRepository, environmentId: string, id: string, state: TriggerRecord['state'], error?: string) {
        heldOf(this).after.push(base.triggers.setStateStatement(environmentId, id, state, error));
      },
    });
    const store = methods<Store>(base, {
      // The held writes are one statement: all or nothing already.
      async transaction<T>(this: Store, work: (store: Store) => Promise<T>): Promise<T> {
        return work(this);
      },
      async lockKey() {
        throw new Error('held writes: no locks');
      },
    });
    Object.defineProperty(store, 'holdsWrites', { value: true });
    // Getters, so that a batch sets one property of its store, not one per repository (a property defined per batch
    // costs ~0.3 µs; one assigned fails where the base store's is read-only).
    for (const name of HELD_REPOSITORIES) {
      Object.defineProperty(store, name, { get(this: Record<PropertyKey, HeldWrites>) { return this[HELD]!.repositories[name]; } });
    }
    return { store, notifications, jobs, messages, events, triggers, subscribers, preferences };
  }

  /** Writes what is held (nothing when nothing is). */
  async flush(): Promise<void> {
    const statements: Held[] = [...this.mustBeFree.map((id) => this.base.notifications.takenIdGuardStatement(id)), ...this.subscribers];
    const keptTexts: Array<CompiledQuery<unknown>> = [];
    for (const { event, jobs } of this.events) {
      const current = jobs.map((job) => this.current(job));
      const render = this.texts.get(event._id);
      const { statements: inserts, keptText } = await this.base.notifications.createWithJobsAndTextStatements(event, current, render);
      statements.push(...inserts);
      if (keptText) keptTexts.push(keptText);
      for (const job of current) {
        const outcome = overviewOutcomeOf(job);
        if (!outcome) continue;
        if (this.writer) statements.push({ add: stepOutcomeSumsForNewJob(this.base.db, endedStepOf(job, outcome)).map((added) => ({ ...added, count: 1 })) });
        else statements.push(...stepOutcomeStatementsForNewJob(this.base.db, this.base.options.dialect, endedStepOf(job, outcome)));
      }
    }
    statements.push(...this.after, ...keptTexts);
    if (this.writer) {
      if (statements.length > 0) await this.writer.writeTogether((run, addAtCommit) => runInOrder(statements, run, addAtCommit));
      return;
    }
    await this.flushAsOneStatement(statements as Array<CompiledQuery<unknown> | NamedStatement>);
  }

  /** Without a writer (PostgreSQL): nothing is held as sums (see the writer's branches above). */
  private async flushAsOneStatement(statements: Array<CompiledQuery<unknown> | NamedStatement>): Promise<void> {
    const last = statements.pop();
    if (!last) return;
    const query = (statement: CompiledQuery<unknown> | NamedStatement) => ('name' in statement ? statement.query : statement);
    const parameters = [...statements, last].reduce((sum, statement) => sum + query(statement).parameters.length, 0);
    if (parameters <= ONE_STATEMENT_MAX_PARAMETERS && !('name' in last)) {
      // Shares a statement with other deliveries' held writes when they wait for one (HeldStatementBatches).
      await this.base.heldStatements.run({ before: statements, last }, this.events.map(({ event }) => event._subscriberId));
      return;
    }
    // Very large events: one transaction of several statements (a named statement's readers need it in theirs, so
    // the message's insert and counters go together).
    await this.base.db.transaction().execute(async (trx) => {
      const all = [...statements, last];
      for (let i = 0; i < all.length; i++) {
        const statement = all[i]!;
        if ('name' in statement) {
          await trx.executeQuery(oneStatement([statement], query(all[++i]!)));
        } else await trx.executeQuery(statement);
      }
    });
  }

  /** The held job as saved last, with the execution details its saves added. */
  private current(job: StoredJob): StoredJob {
    const entry = this.jobs.get(job._id);
    if (!entry || entry.details.length === 0) return entry?.job ?? job;
    return { ...entry.job, executionDetails: [...entry.job.executionDetails, ...entry.details] };
  }
}

/**
 * SQLite: the held statements one after the other; a named statement's reader (the statement after it) runs only when
 * the named one returned rows, as it reads them on PostgreSQL (the message's counters count an inserted message).
 */
function runInOrder(statements: ReadonlyArray<Held>, run: (query: CompiledQuery) => QueryResult<unknown>, addAtCommit: AddAtCommit): void {
  const perform = (statement: Held) => {
    if ('add' in statement) for (const { sums, key, row, count } of statement.add) addAtCommit(sums, key, row, count);
    else run('name' in statement ? statement.query : statement);
  };
  for (let i = 0; i < statements.length; i++) {
    const statement = statements[i]!;
    if (!('name' in statement)) {
      perform(statement);
      continue;
    }
    const reader = statements[++i];
    if (run(statement.query).rows.length > 0 && reader) perform(reader);
  }
}

/** Where a held store and its repositories find their batch (HeldWrites). */
const HELD = Symbol('held writes');
/** The repositories a held store overrides (each inherits the rest from the base store's). */
const HELD_REPOSITORIES = ['notifications', 'jobs', 'messages', 'events', 'triggers', 'subscribers', 'preferences'] as const;
type HeldPrototypes = { store: Store } & { [Name in (typeof HELD_REPOSITORIES)[number]]: Store[Name] };

/** A held write: a statement, a named one (read by the next), or counter rows added at the commit (SQLite). */
type Held = CompiledQuery<unknown> | NamedStatement | { add: Array<{ sums: CommitSums<any>; key: string; row: unknown; count: number }> };
