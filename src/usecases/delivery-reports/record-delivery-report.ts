import { applyProviderReport, outboundEventTypeOf, providerReportDetail, type ProviderReport } from '../../domain/delivery-reports.js';
import { isWebhookEventType, messageEvent } from '../../domain/webhooks.js';
import { overviewOutcomeOfReport } from '../../domain/overview.js';
import { ConflictError, ForbiddenError, NotFoundError } from '../../domain/errors.js';
import { isRecordId, newId } from '../../domain/ids.js';
import type { Integration, ProviderReportedState } from '../../domain/types.js';
import type { InboundReportRequest } from '../../providers/report-ports.js';
import type { Deps } from '../deps.js';

export interface RecordDeliveryReportInput {
  organizationId: string;
  environmentId: string;
  channel: 'email' | 'sms';
  /** The integration's id, or its provider id when the environment has one such integration with reports on. */
  integrationId: string;
  request: InboundReportRequest;
}

/** What became of one event of the report. */
export interface RecordedReport {
  eventId: string;
  state: ProviderReportedState;
  vendorEvent: string;
  /** recorded: the message changed; duplicate: this event id was recorded before; unmatched: no such message here. */
  outcome: 'recorded' | 'duplicate' | 'unmatched';
  messageId?: string;
}

export interface RecordDeliveryReportResult {
  /** Amazon SNS: the subscription was confirmed (no reports in such a request). */
  subscriptionConfirmed: boolean;
  reports: RecordedReport[];
}

/**
 * A provider's delivery report (POST /v1/webhooks/organizations/{org}/environments/{env}/{email|sms}/{integrationId}):
 * the integration must be of that organization, environment and channel (else 404, as any record outside the
 * caller's scope), have inbound reports enabled (else 403), and the vendor's signature must verify (else 401); only
 * then does anything change. Each event changes its message and adds an execution detail (source Webhook) in one
 * transaction, once per vendor event id. Events naming no message of this environment are answered, not retried:
 * a vendor would otherwise redeliver them for days.
 */
export async function recordDeliveryReport(deps: Deps, input: RecordDeliveryReportInput): Promise<RecordDeliveryReportResult> {
  const integration = await findIntegration(deps, input);
  if (!integration || integration.deleted || integration._organizationId !== input.organizationId || integration.channel !== input.channel) {
    throw NotFoundError.entity('Integration', input.integrationId);
  }
  const reader = deps.deliveryReports.get(integration.providerId, input.channel);
  if (!reader) throw new NotFoundError(`Integration with id ${integration._id} (${integration.providerId}) has no delivery reports Herald can read`);
  const { inboundWebhookEnabled, inboundWebhookSigningKey } = integration.configurations;
  if (inboundWebhookEnabled !== true) {
    throw new ForbiddenError('Delivery reports are not enabled for this integration: set configurations.inboundWebhookEnabled');
  }
  if (reader.needsSigningKey && !inboundWebhookSigningKey) {
    throw new ForbiddenError(`${reader.vendor} delivery reports need configurations.inboundWebhookSigningKey`);
  }
  const read = await reader.read(
    input.request,
    { signingKey: inboundWebhookSigningKey, credentials: integration.credentials },
    deps.deliveryReports.context(() => deps.clock.now()),
  );
  if ('confirmSubscription' in read) {
    await deps.deliveryReports.sns.confirm(read.confirmSubscription);
    deps.logger.info({ integrationId: integration._id }, 'SNS subscription confirmed for delivery reports');
    return { subscriptionConfirmed: true, reports: [] };
  }
  const reports: RecordedReport[] = [];
  for (const report of read.reports) reports.push(await recordOne(deps, integration, input.channel, reader.vendor, report));
  return { subscriptionConfirmed: false, reports };
}

/**
 * By integration id, or (as Novu's `providerOrIntegrationId`) by provider id: the environment's one integration of
 * that provider and channel with reports enabled. Several of them would be ambiguous (each has its own key): 409.
 */
async function findIntegration(deps: Deps, input: RecordDeliveryReportInput): Promise<Integration | undefined> {
  if (isRecordId(input.integrationId)) return deps.store.integrations.get(input.environmentId, input.integrationId);
  const candidates = (await deps.store.integrations.list(input.environmentId, { channel: input.channel })).filter(
    (integration) => integration.providerId === input.integrationId && integration.configurations.inboundWebhookEnabled === true,
  );
  if (candidates.length > 1) {
    throw new ConflictError(`Several ${input.integrationId} integrations accept delivery reports in this environment: use the integration id in the URL`);
  }
  return candidates[0];
}

async function recordOne(deps: Deps, integration: Integration, channel: 'email' | 'sms', vendor: string, report: ProviderReport): Promise<RecordedReport> {
  const environmentId = integration._environmentId;
  const at = new Date(deps.clock.now()).toISOString();
  const base = { eventId: report.eventId, state: report.state, vendorEvent: report.vendorEvent };
  return deps.store.transaction(async (store) => {
    const found = await store.messages.findByIdentifier(environmentId, report.messageIds);
    if (!found || found.providerId !== integration.providerId || found.channel !== channel) return { ...base, outcome: 'unmatched' as const };
    // Reports of one message arrive together (SendGrid batches delivered+open): one at a time, each on the last state.
    await store.lockKey(`provider-report:${found._id}`);
    const message = (await store.messages.get(environmentId, found._id)) ?? found;
    if (!(await store.providerReports.claim(environmentId, integration._id, report.eventId, at))) {
      return { ...base, outcome: 'duplicate' as const, messageId: message._id };
    }
    const updated = applyProviderReport(message, report, at);
    await store.messages.save(updated);
    const outcome = overviewOutcomeOfReport(message.providerStatus, report.state);
    if (outcome) {
      await store.overview.recordReportedOutcome(environmentId, {
        messageId: message._id,
        channel: message.channel,
        providerId: integration.providerId,
        workflowId: message._templateId ?? '',
        outcome,
        at,
      });
    }
    if (message._jobId) {
      const { status, detail } = providerReportDetail(report, vendor);
      await store.jobs.addDetail(
        { _id: message._jobId, _environmentId: environmentId, _notificationId: message._notificationId },
        { _id: newId(deps.clock.now()), createdAt: at, status, detail, isRetry: false, isTest: false, providerId: integration.providerId, raw: report.raw, source: 'Webhook' },
      );
    }
    // The outbound webhook event, in this transaction: written with the change or not at all (a duplicate vendor event
    // returned above and records nothing). The subscriber is read only when an endpoint listens.
    const type = outboundEventTypeOf(report.state);
    if (isWebhookEventType(type) && (await store.events.wanted(environmentId))) {
      const subscriber = message.subscriber ?? (await store.subscribers.get(environmentId, message._subscriberId));
      const failed = report.state === 'bounced' || report.state === 'failed' || report.state === 'complained';
      await store.events.record(environmentId, [
        messageEvent(type, updated, {
          previous: message,
          subscriberId: subscriber?.subscriberId,
          ...(failed ? { error: { message: providerReportDetail(report, vendor).detail, code: report.state } } : {}),
        }),
      ]);
    }
    return { ...base, outcome: 'recorded' as const, messageId: message._id };
  });
}
