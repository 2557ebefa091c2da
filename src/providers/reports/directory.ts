import type { Config } from '../../config.js';
import { createGuardedDispatcher, createProviderContext } from '../outbound.js';
import type { DeliveryReportDirectory, DeliveryReportReader, ReportContext } from '../report-ports.js';
import { mailgunReports } from './mailgun.js';
import { postmarkReports } from './postmark.js';
import { resendReports } from './resend.js';
import { sendgridReports } from './sendgrid.js';
import { sesReports } from './ses.js';
import { SnsHttpGateway } from './sns.js';
import { twilioReports } from './twilio.js';

/** Every vendor whose delivery reports Herald reads: the only switch on provider id for inbound reports. */
const READERS: DeliveryReportReader[] = [sendgridReports, mailgunReports, postmarkReports, sesReports, resendReports, twilioReports];

export function getDeliveryReportReader(providerId: string, channel: 'email' | 'sms'): DeliveryReportReader | undefined {
  return READERS.find((reader) => reader.providerId === providerId && reader.channel === channel);
}

/** The directory over the readers; SNS certificate fetches and confirmations go through the outbound guard. */
export function createDeliveryReportDirectory(config: Config): DeliveryReportDirectory & { sns: SnsHttpGateway } {
  const dispatcher = createGuardedDispatcher(config.outbound.allow);
  const providerContext = () =>
    createProviderContext({ timeoutMs: config.outbound.timeoutMs, userAgent: config.outbound.userAgent, allow: config.outbound.allow, dispatcher });
  const sns = new SnsHttpGateway(async (url) => {
    const answer = await providerContext().fetch(url, { method: 'GET', redirect: 'error' });
    const body = await answer.text();
    if (!answer.ok) throw new Error(`SNS answered ${answer.status}`);
    return body;
  });
  return {
    get: getDeliveryReportReader,
    sns,
    context: (now): ReportContext => ({ ...providerContext(), sns, now }),
  };
}
