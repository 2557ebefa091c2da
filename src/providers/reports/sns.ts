import { UnauthorizedError } from '../../domain/errors.js';
import type { SnsGateway } from '../report-ports.js';

/** `sns.<region>.amazonaws.com`, or `.amazonaws.com.cn` in the China regions: the only hosts SNS signs from. */
const SNS_HOST = /^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/;
/** Certificates kept per process; AWS rotates them rarely, so a handful of URLs is all there ever is. */
const MAX_CERTIFICATES = 50;

/** True for `https://sns.<region>.amazonaws.com/<path>` with no port, user or password (checked before any fetch). */
export function isSnsUrl(value: string, options: { pem?: boolean } = {}): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol !== 'https:' || url.port !== '' || url.username !== '' || url.password !== '') return false;
  if (!SNS_HOST.test(url.hostname)) return false;
  return !options.pem || url.pathname.endsWith('.pem');
}

/**
 * Fetches SNS signing certificates and confirms subscriptions through `fetchText` (the outbound-guarded fetch in
 * production). Certificates are kept by URL; `remember` puts one in ahead of time, which is how tests (and an
 * operator without outbound access to AWS) provide a certificate: the URL check still applies to every message.
 */
export class SnsHttpGateway implements SnsGateway {
  private readonly certificates = new Map<string, string>();

  constructor(private readonly fetchText: (url: string) => Promise<string>) {}

  remember(url: string, pem: string): void {
    if (!isSnsUrl(url, { pem: true })) throw new Error(`not an SNS certificate URL: ${url}`);
    this.keep(url, pem);
  }

  async certificate(url: string): Promise<string> {
    if (!isSnsUrl(url, { pem: true })) throw new UnauthorizedError('Amazon SES report rejected: SigningCertURL is not an https://sns.<region>.amazonaws.com certificate');
    const kept = this.certificates.get(url);
    if (kept !== undefined) return kept;
    let pem: string;
    try {
      pem = await this.fetchText(url);
    } catch {
      throw new UnauthorizedError('Amazon SES report rejected: the SNS signing certificate could not be fetched');
    }
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new UnauthorizedError('Amazon SES report rejected: SigningCertURL did not answer a certificate');
    this.keep(url, pem);
    return pem;
  }

  async confirm(subscribeUrl: string): Promise<void> {
    if (!isSnsUrl(subscribeUrl)) throw new UnauthorizedError('Amazon SES report rejected: SubscribeURL is not an https://sns.<region>.amazonaws.com URL');
    await this.fetchText(subscribeUrl);
  }

  private keep(url: string, pem: string): void {
    if (this.certificates.size >= MAX_CERTIFICATES) this.certificates.delete(this.certificates.keys().next().value as string);
    this.certificates.set(url, pem);
  }
}
