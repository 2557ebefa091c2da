import { describe, expect, it } from 'vitest';
import { applyProviderReport, outboundEventTypeOf, providerReportDetail, type ProviderReport } from '../../src/domain/delivery-reports.js';
import type { Message, ProviderReportedState } from '../../src/domain/types.js';

const AT = '2026-11-25T10:00:00.000Z';
const message = (extra: Partial<Message> = {}): Message => ({
  _id: 'm1',
  _environmentId: 'e',
  _organizationId: 'o',
  _notificationId: 'n',
  _subscriberId: 's',
  createdAt: '2026-11-25T09:00:00.000Z',
  deliveredAt: ['2026-11-25T09:00:01.000Z'],
  transactionId: 't',
  channel: 'email',
  read: false,
  seen: false,
  cta: {},
  status: 'sent',
  ...extra,
});
const report = (state: ProviderReportedState, extra: Partial<ProviderReport> = {}): ProviderReport => ({
  state,
  vendorEvent: state,
  messageIds: ['x'],
  eventId: 'ev',
  raw: '{}',
  ...extra,
});

describe('applyProviderReport: the status mapping', () => {
  it('delivered appends the reported time (else the arrival time) to deliveredAt and keeps the status', () => {
    expect(applyProviderReport(message(), report('delivered', { occurredAt: '2026-11-25T09:30:00.000Z' }), AT)).toMatchObject({
      status: 'sent',
      providerStatus: 'delivered',
      deliveredAt: ['2026-11-25T09:00:01.000Z', '2026-11-25T09:30:00.000Z'],
      updatedAt: AT,
    });
    expect(applyProviderReport(message({ deliveredAt: undefined }), report('delivered'), AT).deliveredAt).toEqual([AT]);
  });

  it('bounced and failed make the message an error with the reason; complained a warning, never over an error', () => {
    expect(applyProviderReport(message(), report('bounced', { vendorEvent: 'Bounce', reason: '550 no user' }), AT)).toMatchObject({
      status: 'error',
      providerStatus: 'bounced',
      errorId: 'provider_bounced',
      errorText: 'Bounced (Bounce): 550 no user',
    });
    expect(applyProviderReport(message(), report('failed'), AT)).toMatchObject({ status: 'error', errorId: 'provider_failed', errorText: 'Delivery failed (failed)' });
    expect(applyProviderReport(message(), report('complained'), AT)).toMatchObject({ status: 'warning', providerStatus: 'complained', errorId: 'provider_complaint' });
    const bounced = applyProviderReport(message(), report('bounced'), AT);
    expect(applyProviderReport(bounced, report('complained'), AT)).toMatchObject({ status: 'error', errorId: 'provider_bounced', providerStatus: 'complained' });
  });

  it('opened and clicked keep the status; engagement only moves forward and never hides a bounce', () => {
    const opened = applyProviderReport(message(), report('opened'), AT);
    expect(opened).toMatchObject({ status: 'sent', providerStatus: 'opened', deliveredAt: ['2026-11-25T09:00:01.000Z'] });
    expect(applyProviderReport(opened, report('delivered'), AT).providerStatus).toBe('opened');
    expect(applyProviderReport(opened, report('clicked'), AT).providerStatus).toBe('clicked');
    const bounced = applyProviderReport(message(), report('bounced'), AT);
    expect(applyProviderReport(bounced, report('opened'), AT)).toMatchObject({ status: 'error', providerStatus: 'bounced' });
  });

  it('names the execution detail and the outbound event of each state', () => {
    expect(providerReportDetail(report('opened', { vendorEvent: 'open' }), 'SendGrid')).toEqual({ status: 'ReadConfirmation', detail: 'Opened (SendGrid report: open)' });
    expect(providerReportDetail(report('complained', { reason: 'abuse' }), 'Amazon SES')).toEqual({ status: 'Warning', detail: 'Complaint (Amazon SES report: complained): abuse' });
    expect(['delivered', 'bounced', 'complained', 'opened', 'clicked', 'failed'].map((state) => outboundEventTypeOf(state as ProviderReportedState))).toEqual([
      'message.delivered',
      'message.bounced',
      'message.complained',
      'message.opened',
      'message.clicked',
      'message.failed',
    ]);
  });
});
