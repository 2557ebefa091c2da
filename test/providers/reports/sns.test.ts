import { describe, expect, it } from 'vitest';
import { isSnsUrl, SnsHttpGateway } from '../../../src/providers/reports/sns.js';

describe('SNS certificate and subscription URLs', () => {
  it('accepts only https://sns.<region>.amazonaws.com(.cn) without port or credentials', () => {
    expect(isSnsUrl('https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem', { pem: true })).toBe(true);
    expect(isSnsUrl('https://sns.cn-north-1.amazonaws.com.cn/SimpleNotificationService-abc.pem', { pem: true })).toBe(true);
    expect(isSnsUrl('https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&Token=x')).toBe(true);
    for (const url of [
      'http://sns.us-east-1.amazonaws.com/x.pem',
      'https://sns.us-east-1.amazonaws.com.evil.example/x.pem',
      'https://evil.example/sns.us-east-1.amazonaws.com/x.pem',
      'https://sns.us-east-1.amazonaws.com:8443/x.pem',
      'https://user:pw@sns.us-east-1.amazonaws.com/x.pem',
      'https://s3.us-east-1.amazonaws.com/x.pem',
      'https://sns.us-east-1.amazonaws.com/x.txt',
      'not a url',
    ]) {
      expect(isSnsUrl(url, { pem: true }), url).toBe(false);
    }
  });

  it('never fetches a URL off the SNS hosts; keeps what it fetched', async () => {
    const fetched: string[] = [];
    const gateway = new SnsHttpGateway(async (url) => {
      fetched.push(url);
      return '-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----\n';
    });
    await expect(gateway.certificate('https://127.0.0.1/SimpleNotificationService-x.pem')).rejects.toThrow(/SigningCertURL/);
    await expect(gateway.confirm('https://127.0.0.1/?Action=ConfirmSubscription')).rejects.toThrow(/SubscribeURL/);
    expect(fetched).toEqual([]);
    const url = 'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-x.pem';
    await gateway.certificate(url);
    await gateway.certificate(url);
    expect(fetched).toEqual([url]);
    expect(() => gateway.remember('https://example.com/x.pem', 'pem')).toThrow();
  });
});
