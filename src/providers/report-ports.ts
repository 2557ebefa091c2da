import type { ProviderReport } from '../domain/delivery-reports.js';
import type { Credentials } from '../domain/types.js';
import type { ProviderContext } from './ports.js';

/**
 * Provider delivery reports coming in (docs/provider-delivery-reports.md): one reader per vendor under
 * providers/reports/. A reader checks the vendor's own signature over the raw request and reads its events; it
 * throws UnauthorizedError for a missing or wrong signature and ValidationError for a body it cannot read, so a
 * report that fails either changes nothing.
 */

/** The request exactly as the vendor sent it: signatures are made over these bytes (and, for Twilio, the URL). */
export interface InboundReportRequest {
  /** The URL the vendor called: HERALD_PUBLIC_URL + path when configured, else built from the Host header. */
  url: string;
  /** Lower-case header names. */
  headers: Record<string, string | undefined>;
  body: Buffer;
}

/** What a reader needs from the integration: the signing key (configurations) and the vendor credentials. */
export interface ReportSecrets {
  signingKey?: string;
  credentials: Credentials;
}

/** A verified request: its reports, or (Amazon SNS) a subscription to confirm by fetching `subscribeUrl`. */
export type InboundReportRead = { reports: ProviderReport[] } | { confirmSubscription: string };

export interface ReportContext extends ProviderContext {
  /** Amazon SNS signing certificates and subscription confirmation (providers/reports/sns.ts). */
  sns: SnsGateway;
  /** Now, in ms (the clock), for signature timestamp windows. */
  now(): number;
}

export interface DeliveryReportReader {
  providerId: string;
  channel: 'email' | 'sms';
  /** The vendor's name as the timeline shows it ("SendGrid"). */
  vendor: string;
  /** True when the reader needs `configurations.inboundWebhookSigningKey` (false: Twilio signs with its auth token). */
  needsSigningKey: boolean;
  read(request: InboundReportRequest, secrets: ReportSecrets, ctx: ReportContext): Promise<InboundReportRead>;
}

/**
 * Amazon SNS's side: signing certificates are fetched only from `https://sns.<region>.amazonaws.com/*.pem` (checked
 * before any request) and kept; a SubscriptionConfirmation is confirmed by a GET of its SubscribeURL on such a host.
 */
export interface SnsGateway {
  /** The PEM certificate at `url`; throws UnauthorizedError for a URL that is not an SNS certificate URL. */
  certificate(url: string): Promise<string>;
  /** Confirms a subscription (GET SubscribeURL); throws UnauthorizedError for a URL that is not an SNS URL. */
  confirm(subscribeUrl: string): Promise<void>;
}

/** How use-cases reach the readers without importing vendor code: built in container.ts. */
export interface DeliveryReportDirectory {
  /** The reader for a provider on a channel, or undefined when Herald reads no reports from it. */
  get(providerId: string, channel: 'email' | 'sms'): DeliveryReportReader | undefined;
  context(now: () => number): ReportContext;
  sns: SnsGateway;
}
