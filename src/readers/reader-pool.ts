import { Worker } from 'node:worker_threads';
import { ValidationError } from '../domain/errors.js';
import type { Clock } from '../domain/clock.js';
import type { Logger } from '../usecases/deps.js';
import type { ListMessagesInput } from '../usecases/messages/list-messages.js';
import type { ListNotificationsInput } from '../usecases/notifications/list-notifications.js';
import type { PageAnswer, PageRequest, ReaderThreadData } from './protocol.js';

/**
 * Reader threads for the embedded list pages (issue 24). Embedded, every SQLite read runs synchronously on the one
 * event loop that also serves HTTP, the sockets and the delivery worker: a list page's reads and its serialisation
 * were most of its CPU (BENCHMARKS.md, session 22), and at 10M messages a cold deep page's disk reads blocked every
 * other request for 6-28 ms. Here `GET /v1/messages` and `GET /v1/notifications` read and write their page on one of
 * a few threads, each with its own read-only connection (store/sqlite/connection.ts, openSqliteReader): in WAL mode it
 * reads the last committed state beside the main connection's writer without a lock. Every write a client was told of
 * is committed (its promise resolves after the group commit), so the next list read on a thread sees it, the message
 * counters' commit sums included (they are written in the same commit). The main thread keeps authentication, the rate
 * limit, validation of the query and the reply; the thread answers the body's bytes, transferred, not copied.
 *
 * A page the thread cannot answer (the thread died, was stopped, or threw anything but a ValidationError) resolves
 * `undefined`, and the route reads it on the main thread as without threads: the same page, or the same typed error
 * for the one error mapper. A thread that dies is started again. A thread that has left a page unanswered for
 * `answerTimeoutMs` counts as hung (a page takes milliseconds, a cold one at 10M messages tens): its pages go to the
 * main thread at once, another thread takes its place, and it is terminated. PostgreSQL (scaled out) has no pool: its
 * reads are already off the event loop.
 */
export interface PageReaders {
  /** The body of a `GET /v1/messages` page, or undefined: read it on the main thread. */
  messagePage(input: ListMessagesInput): Promise<Buffer | undefined>;
  /** The body of a `GET /v1/notifications` page, or undefined: read it on the main thread. */
  notificationPage(input: ListNotificationsInput): Promise<Buffer | undefined>;
  close(): Promise<void>;
}

export interface ReaderPoolOptions {
  file: string;
  threads: number;
  clock: Clock;
  activityRetentionDays?: number;
  logger?: Pick<Logger, 'warn'>;
  /** A page unanswered this long marks its thread hung (default DEFAULT_ANSWER_TIMEOUT_MS). */
  answerTimeoutMs?: number;
  /** The thread's module (tests: one that never answers); default the reader thread beside this file. */
  threadModule?: URL;
}

/** Far above any page's time, far below a client's patience: a hung thread's pages are answered by the main thread. */
const DEFAULT_ANSWER_TIMEOUT_MS = 5000;

/** A thread that died this soon after its start is started again only after this long (a thread that cannot start). */
const RESTART_BACKOFF_MS = 1000;
const QUICK_DEATH_MS = 1000;

interface Waiting {
  resolve(body: Buffer | undefined): void;
  reject(error: Error): void;
  /** performance.now() when asked: the first entry of `waiting` (insertion order) is the oldest. */
  askedAt: number;
}

class ReaderThread {
  readonly worker: Worker;
  readonly waiting = new Map<number, Waiting>();
  readonly startedAt = Date.now();
  /** performance.now() when the thread had loaded its modules and opened its connection; undefined before. */
  private readyAt?: number;
  readonly exited: Promise<void>;

  constructor(module: URL, data: ReaderThreadData, onExit: (thread: ReaderThread, code: number) => void, onError: (error: Error) => void) {
    this.worker = new Worker(module, { workerData: data });
    this.worker.unref();
    this.worker.on('message', (answers: PageAnswer[] | 'ready') => {
      if (answers === 'ready') this.readyAt = performance.now();
      else for (const answer of answers) this.settle(answer);
    });
    this.worker.on('error', onError);
    this.exited = new Promise((resolve) =>
      this.worker.once('exit', (code) => {
        this.abandon();
        onExit(this, code);
        resolve();
      }),
    );
  }

  ask(request: PageRequest): Promise<Buffer | undefined> {
    return new Promise((resolve, reject) => {
      this.waiting.set(request.id, { resolve, reject, askedAt: performance.now() });
      // The requests of one event-loop turn go together, in one message: a message costs a wake-up of each thread.
      if (this.outbox.push(request) === 1) setImmediate(this.flush);
    });
  }

  /**
   * How long its oldest unanswered page has waited since the thread was ready (0: none waits, or still starting:
   * loading its modules can take seconds on a busy machine, and a thread that cannot start exits).
   */
  oldestWaitMs(now: number): number {
    if (this.readyAt === undefined) return 0;
    for (const waiter of this.waiting.values()) return now - Math.max(waiter.askedAt, this.readyAt);
    return 0;
  }

  /** Whatever it has not answered is read on the main thread (an answer that comes later finds no waiter). */
  abandon(): void {
    for (const waiter of this.waiting.values()) waiter.resolve(undefined);
    this.waiting.clear();
  }

  private outbox: PageRequest[] = [];
  private readonly flush = () => {
    const requests = this.outbox;
    this.outbox = [];
    this.worker.postMessage(requests);
  };

  private settle(answer: PageAnswer): void {
    const waiter = this.waiting.get(answer.id);
    if (!waiter) return;
    this.waiting.delete(answer.id);
    if ('body' in answer) waiter.resolve(Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength));
    else if ('validation' in answer) waiter.reject(new ValidationError(answer.validation));
    else waiter.resolve(undefined);
  }
}

export class ReaderPool implements PageReaders {
  private readonly threads: Array<ReaderThread | undefined>;
  private nextId = 1;
  private closed = false;
  private readonly data: ReaderThreadData;
  private readonly module: URL;
  private readonly answerTimeoutMs: number;
  private readonly watchdog: NodeJS.Timeout;

  constructor(private readonly options: ReaderPoolOptions) {
    this.data = { file: options.file, activityRetentionDays: options.activityRetentionDays };
    // Compiled: the thread's .js beside this one. Under tsx or vitest (the source): source-thread.mjs, which registers
    // tsx's loader in the thread and imports the .ts.
    this.module = options.threadModule ?? new URL(import.meta.url.endsWith('.ts') ? './source-thread.mjs' : './reader-thread.js', import.meta.url);
    this.answerTimeoutMs = options.answerTimeoutMs ?? DEFAULT_ANSWER_TIMEOUT_MS;
    this.threads = Array.from({ length: options.threads }, (_, index) => this.start(index));
    // One timer for the pool rather than one per page (pages come by thousands a second).
    this.watchdog = setInterval(() => this.replaceHungThreads(), Math.max(10, Math.min(1000, this.answerTimeoutMs / 4)));
    this.watchdog.unref();
  }

  messagePage(input: ListMessagesInput): Promise<Buffer | undefined> {
    return this.ask((id) => ({ id, op: 'messages', input }));
  }

  notificationPage(input: ListNotificationsInput): Promise<Buffer | undefined> {
    const now = this.options.clock.now();
    return this.ask((id) => ({ id, op: 'notifications', input, now }));
  }

  /** The threads' ids, in pool order (undefined while one is being replaced); tests. */
  threadIds(): Array<number | undefined> {
    return this.threads.map((thread) => thread?.worker.threadId);
  }

  /** Ends a thread as a crash would (tests): its pages go to the main thread, and a new thread takes its place. */
  async kill(index: number): Promise<void> {
    const thread = this.threads[index];
    if (thread) await thread.worker.terminate();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.watchdog);
    const stopping = this.threads.filter((thread): thread is ReaderThread => thread !== undefined);
    for (const thread of stopping) {
      // Held while it stops (see background-checkpoint.ts: unref'd, its exit would not keep a closing process alive).
      thread.worker.ref();
      thread.worker.postMessage('stop');
    }
    // A hung thread never reads 'stop': after the answer timeout it is terminated and left (unref'd again), so a
    // closing process does not wait on it.
    await Promise.all(
      stopping.map(async (thread) => {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), this.answerTimeoutMs)));
        if ((await Promise.race([thread.exited, late])) === 'late') {
          thread.abandon();
          thread.worker.unref();
          void thread.worker.terminate().catch(() => undefined);
        }
        clearTimeout(timer);
      }),
    );
  }

  /** A thread whose oldest page has waited past the timeout: its pages to the main thread, a new thread in its place. */
  private replaceHungThreads(): void {
    if (this.closed) return;
    const now = performance.now();
    for (const [index, thread] of this.threads.entries()) {
      if (!thread || thread.oldestWaitMs(now) < this.answerTimeoutMs) continue;
      this.options.logger?.warn({ thread: index, waitingPages: thread.waiting.size, answerTimeoutMs: this.answerTimeoutMs }, 'reader thread did not answer in time; replacing it');
      this.threads[index] = this.start(index);
      thread.abandon();
      // Its exit finds another thread in its place and starts none. A thread stuck in native code ends when it returns.
      void thread.worker.terminate().catch(() => undefined);
    }
  }

  /** Pages a thread answered (a body or a ValidationError), and pages left to the main thread. */
  readonly counts = { threads: 0, mainThread: 0 };

  private async ask(request: (id: number) => PageRequest): Promise<Buffer | undefined> {
    // The least busy live thread; none (all being replaced, or closed): the main thread reads.
    let chosen: ReaderThread | undefined;
    for (const thread of this.threads) if (thread && (!chosen || thread.waiting.size < chosen.waiting.size)) chosen = thread;
    if (!chosen || this.closed) {
      this.counts.mainThread++;
      return undefined;
    }
    let body: Buffer | undefined;
    try {
      body = await chosen.ask(request(this.nextId++));
    } catch (error) {
      this.counts.threads++;
      throw error;
    }
    this.counts[body === undefined ? 'mainThread' : 'threads']++;
    return body;
  }

  private start(index: number): ReaderThread {
    return new ReaderThread(
      this.module,
      this.data,
      (thread, code) => {
        if (this.threads[index] !== thread) return;
        this.threads[index] = undefined;
        if (this.closed) return;
        this.options.logger?.warn({ thread: index, code }, 'reader thread exited; starting another');
        const wait = Date.now() - thread.startedAt < QUICK_DEATH_MS ? RESTART_BACKOFF_MS : 0;
        const timer = setTimeout(() => {
          if (!this.closed && this.threads[index] === undefined) this.threads[index] = this.start(index);
        }, wait);
        timer.unref();
      },
      (error) => this.options.logger?.warn({ thread: index, err: error }, 'reader thread failed'),
    );
  }
}
