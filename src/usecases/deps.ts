import type { Clock } from '../domain/clock.js';
import type { NotificationEvent } from '../domain/types.js';
import type { Config } from '../config.js';
import type { IdempotencyStore, KeyRevocations, RateLimitStore, Store } from '../store/ports.js';
import type { JobQueue } from '../queue/ports.js';
import type { ProviderDirectory } from '../providers/ports.js';
import type { DeliveryReportDirectory } from '../providers/report-ports.js';
import type { RealtimeNotifier } from '../realtime/ports.js';
import type { WebhookSender } from '../webhooks/ports.js';
import type { Metrics, Tracing } from '../observability/ports.js';
import type { BridgeClient } from '../bridge/ports.js';

/**
 * What use-cases may depend on: ports only, never a concrete database, queue or HTTP library.
 * `container.ts` builds one of these; each use-case takes the whole object and uses what it needs.
 * Areas add their ports here (queue, providers, ...).
 */
export interface Deps {
  config: Config;
  clock: Clock;
  store: Store;
  idempotency: IdempotencyStore;
  rateLimits: RateLimitStore;
  /** HMAC secret for session tokens. */
  sessionSecret: Uint8Array;
  logger: Logger;
  /** Delivery providers by id and channel. */
  providers: ProviderDirectory;
  /** The job queue between API and worker. */
  queue: JobQueue;
  /** Inbox realtime events, called after the write they announce is durable (src/realtime/ports.ts). */
  realtime: RealtimeNotifier;
  /** Revoked secret keys announced to every process (their key caches drop them at once). */
  keyRevocations: KeyRevocations;
  /** Readers of provider delivery reports (signature checks per vendor) by provider id and channel. */
  deliveryReports: DeliveryReportDirectory;
  /** Sends outbound webhooks through the private-address guard (src/webhooks/ports.ts). */
  webhooks: WebhookSender;
  /** Metric recorders (src/observability/ports.ts); no-ops when HERALD_METRICS=off. */
  metrics: Metrics;
  /** OpenTelemetry spans; no-ops unless an OTLP endpoint is configured. */
  tracing: Tracing;
  /** Signed calls to @novu/framework bridges (code-first workflows), through the outbound guard. */
  bridge: BridgeClient;
  /**
   * Deleted subscribers announced to every process (message: `<environmentId>:<subscriberRecordId>`): their
   * remembered tokens are dropped and their sockets disconnected at once.
   */
  subscriberRevocations: KeyRevocations;
  /**
   * The text `GET /v1/notifications` writes an event as in its page (src/http/notification-page-serializer.ts). When
   * set, the worker keeps it for an event whose jobs have all ended (keepEventText), and a page writes it as it is.
   */
  eventListText?: (event: NotificationEvent) => string;
  /**
   * Set where the store holds its writes (the Store of Store.batch, see held-effects.ts): runs `effect`, with the
   * deps of the unheld store, once the held writes are durable. Work that must read what it just wrote uses it.
   */
  afterHeldWrites?: (effect: (deps: Deps) => Promise<void>) => void;
}

/** The subset of pino's logger the core uses, so use-cases do not import pino. */
export interface Logger {
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  debug(obj: object | string, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}
