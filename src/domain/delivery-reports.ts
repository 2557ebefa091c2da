import type { ExecutionDetailStatus, Message, ProviderReportedState } from './types.js';

/**
 * One event of a provider's delivery report (SendGrid event, Mailgun event, SNS notification, Twilio status
 * callback...), after its signature was verified and its vendor shape was read. Events Herald does not map (SendGrid
 * `processed`, Twilio `sending`) never become a ProviderReport.
 */
export interface ProviderReport {
  state: ProviderReportedState;
  /** The vendor's name of the event as sent (`delivered`, `hard_bounce`, `Bounce`, `undelivered`). */
  vendorEvent: string;
  /**
   * Ids that may name the message, most exact first: the vendor's id as stored at send time, or a form of it the
   * report carries (SendGrid appends `.filter...` to X-Message-Id; Mailgun drops the angle brackets).
   */
  messageIds: string[];
  /** The vendor's id of this one event, for redeliveries; a hash of `raw` when the vendor gives none. */
  eventId: string;
  /** When the vendor says it happened (ISO 8601); the report's arrival time when absent or unreadable. */
  occurredAt?: string;
  /** The vendor's reason: a bounce diagnostic, an error code, the clicked URL. */
  reason?: string;
  /** The vendor's own text of this event (one element of a batch, or the whole body). */
  raw: string;
}

/** Reported states that say the message reached the recipient's side, in the order they can follow each other. */
const ENGAGEMENT_RANK: Partial<Record<ProviderReportedState, number>> = { delivered: 1, opened: 2, clicked: 3 };

/**
 * The message after a report. The spec's Message `status` has three values (`sent`, `error`, `warning`), so:
 * bounced and failed make it `error` (with errorId/errorText), complained makes it `warning` (an `error` stays), and
 * delivered, opened and clicked leave it as it is. `delivered` also adds the time to `deliveredAt`. `providerStatus`
 * holds the reported state itself, except that a late `delivered` does not replace `opened` or `clicked` (vendors
 * do not promise their order), and an engagement report does not replace a bounce or failure.
 */
export function applyProviderReport(message: Message, report: ProviderReport, at: string): Message {
  const next: Message = { ...message, updatedAt: at };
  const when = report.occurredAt ?? at;
  const reason = report.reason ? `: ${report.reason}` : '';
  switch (report.state) {
    case 'delivered':
      next.deliveredAt = [...(message.deliveredAt ?? []), when];
      break;
    case 'bounced':
      next.status = 'error';
      next.errorId = 'provider_bounced';
      next.errorText = `Bounced (${report.vendorEvent})${reason}`;
      break;
    case 'failed':
      next.status = 'error';
      next.errorId = 'provider_failed';
      next.errorText = `Delivery failed (${report.vendorEvent})${reason}`;
      break;
    case 'complained':
      if (message.status !== 'error') {
        next.status = 'warning';
        next.errorId = 'provider_complaint';
        next.errorText = `Recipient complained (${report.vendorEvent})${reason}`;
      }
      break;
    case 'opened':
    case 'clicked':
      break;
  }
  next.providerStatus = nextProviderStatus(message.providerStatus, report.state);
  return next;
}

function nextProviderStatus(current: ProviderReportedState | undefined, reported: ProviderReportedState): ProviderReportedState {
  if (current === undefined) return reported;
  const currentRank = ENGAGEMENT_RANK[current];
  const reportedRank = ENGAGEMENT_RANK[reported];
  if (reportedRank === undefined) return reported;
  // An engagement report after a bounce/failure/complaint keeps the worse news; among engagements the furthest wins.
  if (currentRank === undefined) return current;
  return reportedRank >= currentRank ? reported : current;
}

const DETAIL_STATUS: Record<ProviderReportedState, ExecutionDetailStatus> = {
  delivered: 'Success',
  opened: 'ReadConfirmation',
  clicked: 'ReadConfirmation',
  bounced: 'Failed',
  failed: 'Failed',
  complained: 'Warning',
};

const STATE_LABEL: Record<ProviderReportedState, string> = {
  delivered: 'Delivered',
  opened: 'Opened',
  clicked: 'Clicked',
  bounced: 'Bounced',
  failed: 'Failed',
  complained: 'Complaint',
};

/**
 * The execution detail's status and text for a report: "Delivered (SendGrid report: delivered)". The dashboard's
 * timeline shows execution details with `source: Webhook` as provider reports.
 */
export function providerReportDetail(report: ProviderReport, vendor: string): { status: ExecutionDetailStatus; detail: string } {
  const reason = report.reason ? `: ${report.reason}` : '';
  return { status: DETAIL_STATUS[report.state], detail: `${STATE_LABEL[report.state]} (${vendor} report: ${report.vendorEvent})${reason}` };
}

/**
 * The outbound event a report announces (the names of issue #21's event catalogue): recorded with the change in
 * the same transaction by record-delivery-report.ts.
 */
export function outboundEventTypeOf(state: ProviderReportedState): string {
  return `message.${state}`;
}
