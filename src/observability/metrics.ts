import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Logger } from '../usecases/deps.js';
import type { QueueStats } from '../queue/ports.js';
import type { JobStatusLabel, Metrics } from './ports.js';

/** Read at scrape time: the process's queue and database pool. */
export interface MetricSources {
  queue?: () => Promise<QueueStats>;
  /** Connections checked out of the pool, and callers waiting for one. */
  dbPool: () => { inUse: number; waiting: number };
  logger: Logger;
}

/** Seconds; HTTP answers are mostly sub-millisecond to tens of ms, provider calls up to the outbound timeout. */
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const JOB_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const PROVIDER_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * prom-client's default process metrics (CPU, memory, event-loop lag, GC), in one registry per process: they describe
 * the process, and each collector set holds an event-loop monitor and a GC observer for good. All but those two are
 * read at scrape time.
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }
  return processRegistry;
}

/**
 * How often the event-loop delay monitor behind `nodejs_eventloop_lag_{min,max,mean,stddev,p50,p90,p99}_seconds` samples
 * (prom-client's default is 10 ms). Each sample is a timer that wakes the process: an idle node used 3.7 ms of CPU
 * per second with a 10 ms monitor, 0.7 ms with 100 ms, 0.4 ms without one. A delay is still measured to the nanosecond; a stall shorter
 * than this can fall between two samples. `nodejs_eventloop_lag_seconds` is measured at scrape time either way.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * The prom-client implementation of the Metrics port, over a registry of its own (not prom-client's global one), so
 * that several apps in one process (tests) keep separate counts. A scrape also includes the process metrics.
 */
export class PromMetrics implements Metrics {
  readonly registry = new Registry();
  private readonly http: Histogram<'method' | 'route' | 'status_code'>;
  private readonly triggers: Counter;
  private readonly jobs: Counter<'type' | 'status'>;
  private readonly jobDuration: Histogram<'type'>;
  private readonly deliveries: Counter<'channel' | 'provider' | 'status'>;
  private readonly providerDuration: Histogram<'provider'>;
  private readonly webhooks: Counter<'status'>;
  private readonly realtimeSources = new Set<() => number>();
  /**
   * Each label set's child, found by route, then method, then status: the route and method strings are the same
   * objects on every request (Fastify's route template, Node's method), so no key is built per request.
   */
  private readonly httpChildren = new Map<string, Map<string, Map<number, { observe(value: number): void }>>>();

  private readonly jobChildren = new Children((type, status) => this.jobs.labels({ type, status }));
  private readonly jobDurationChildren = new Children((type) => this.jobDuration.labels({ type }));
  private readonly deliveryChildren = new Children((channel, provider, status) => this.deliveries.labels({ channel, provider, status }));

  constructor(private readonly sources: MetricSources) {
    const registers = [this.registry];
    processMetrics();
    this.http = new Histogram({
      name: 'herald_http_request_duration_seconds',
      help: 'HTTP requests answered, by method, route template and status code',
      labelNames: ['method', 'route', 'status_code'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.triggers = new Counter({ name: 'herald_triggers_total', help: 'Triggers accepted', registers });
    this.jobs = new Counter({ name: 'herald_jobs_total', help: 'Queue jobs and step runs ended, by type and outcome', labelNames: ['type', 'status'], registers });
    this.jobDuration = new Histogram({
      name: 'herald_job_duration_seconds',
      help: 'Time to run one queue job or step, by type',
      labelNames: ['type'],
      buckets: JOB_BUCKETS,
      registers,
    });
    this.deliveries = new Counter({
      name: 'herald_deliveries_total',
      help: 'Messages recorded by channel steps, by channel, provider and message status',
      labelNames: ['channel', 'provider', 'status'],
      registers,
    });
    this.providerDuration = new Histogram({
      name: 'herald_provider_request_duration_seconds',
      help: "Time of one provider send call (the vendor's API or SMTP server)",
      labelNames: ['provider'],
      buckets: PROVIDER_BUCKETS,
      registers,
    });
    this.webhooks = new Counter({ name: 'herald_webhook_deliveries_total', help: 'Outbound webhook delivery attempts, by outcome', labelNames: ['status'], registers });
    this.queueGauges(registers);
    const realtimeSources = this.realtimeSources;
    new Gauge({
      name: 'herald_realtime_connections',
      help: 'Inbox sockets open on this process',
      registers,
      collect() {
        let total = 0;
        for (const count of realtimeSources) total += count();
        this.set(total);
      },
    });
    const pool = sources.dbPool;
    new Gauge({
      name: 'herald_db_pool_in_use',
      help: 'Database connections in use (PostgreSQL: checked out of the pool; SQLite: its one connection, always 1)',
      registers,
      collect() {
        this.set(pool().inUse);
      },
    });
    new Gauge({
      name: 'herald_db_pool_waiting',
      help: 'Queries waiting for a free database connection (PostgreSQL; always 0 on SQLite)',
      registers,
      collect() {
        this.set(pool().waiting);
      },
    });
  }

  /** Both gauges come from one read of the queue per scrape. */
  private queueGauges(registers: Registry[]): void {
    const { queue, logger } = this.sources;
    let pending: Promise<QueueStats | undefined> | undefined;
    const read = () =>
      (pending ??= (queue ? queue() : Promise.resolve(undefined))
        .catch((error: unknown) => {
          logger.warn({ err: error }, 'queue statistics could not be read for /metrics');
          return undefined;
        })
        .finally(() => setImmediate(() => (pending = undefined))));
    new Gauge({
      name: 'herald_queue_jobs',
      help: 'Queue jobs by state (waiting = due now, delayed = due later); the queue is shared by every process',
      labelNames: ['state'],
      registers,
      async collect() {
        const stats = await read();
        if (!stats) return;
        for (const state of ['waiting', 'delayed', 'active', 'failed'] as const) this.set({ state }, stats[state]);
      },
    });
    new Gauge({
      name: 'herald_queue_oldest_waiting_seconds',
      help: 'How long the oldest due queue job has waited to start (0 when none waits)',
      registers,
      async collect() {
        const stats = await read();
        if (stats) this.set(stats.oldestWaitingMs / 1000);
      },
    });
  }

  triggersAccepted(count: number): void {
    this.triggers.inc(count);
  }

  jobFinished(type: string, status: JobStatusLabel, seconds: number): void {
    this.jobChildren.get(type, status).inc();
    this.jobDurationChildren.get(type).observe(seconds);
  }

  delivery(channel: string, providerId: string | undefined, status: string): void {
    this.deliveryChildren.get(channel, providerId ?? 'none', status).inc();
  }

  providerRequest(providerId: string, seconds: number): void {
    this.providerDuration.observe({ provider: providerId }, seconds);
  }

  webhookDelivery(status: string): void {
    this.webhooks.inc({ status });
  }

  httpRequest(method: string, route: string, statusCode: number, seconds: number): void {
    let byMethod = this.httpChildren.get(route);
    if (!byMethod) this.httpChildren.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let child = byStatus.get(statusCode);
    if (!child) byStatus.set(statusCode, (child = this.http.labels({ method, route, status_code: statusCode })));
    child.observe(seconds);
  }

  trackRealtimeConnections(count: () => number): () => void {
    this.realtimeSources.add(count);
    return () => this.realtimeSources.delete(count);
  }

  async scrape(): Promise<{ contentType: string; body: string }> {
    const [process, own] = await Promise.all([processMetrics().metrics(), this.registry.metrics()]);
    return { contentType: this.registry.contentType, body: process + own };
  }
}

/**
 * prom-client children (a metric with its label values bound) kept per label values, one Map level per label: a
 * metric's own inc/observe with a label object validates and hashes that object on every call.
 */
class Children<T> {
  private readonly root = new Map<string, unknown>();

  constructor(private readonly make: (...values: string[]) => T) {}

  get(...values: string[]): T {
    let level = this.root;
    const last = values.length - 1;
    for (let i = 0; i < last; i++) {
      let next = level.get(values[i]!) as Map<string, unknown> | undefined;
      if (!next) level.set(values[i]!, (next = new Map()));
      level = next;
    }
    let child = level.get(values[last]!) as T | undefined;
    if (child === undefined) level.set(values[last]!, (child = this.make(...values)));
    return child;
  }
}
