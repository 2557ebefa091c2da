import { describe, expect, it } from 'vitest';
import { signingKey, signRequest } from '../../src/providers/aws-sigv4.js';

// AWS's published Signature Version 4 examples (the aws-sig-v4-test-suite and the IAM ListUsers example).
const SUITE = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  region: 'us-east-1',
};
const AT = new Date('2015-08-30T12:36:00Z');

describe('AWS SigV4', () => {
  it('derives the documented signing key', () => {
    expect(signingKey(SUITE.secretAccessKey, '20150830', 'us-east-1', 'iam').toString('hex')).toBe(
      'c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9',
    );
  });

  it('matches get-vanilla', () => {
    const headers = signRequest(
      { method: 'GET', url: new URL('https://example.amazonaws.com/'), headers: {}, body: '' },
      { ...SUITE, service: 'service' },
      AT,
    );
    expect(headers['x-amz-date']).toBe('20150830T123600Z');
    expect(headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, ' +
        'Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    );
  });

  it('matches post-vanilla and get-vanilla-query-order-key-case', () => {
    const post = signRequest(
      { method: 'POST', url: new URL('https://example.amazonaws.com/'), headers: {}, body: '' },
      { ...SUITE, service: 'service' },
      AT,
    );
    expect(post.authorization).toContain('Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b');
    const query = signRequest(
      { method: 'GET', url: new URL('https://example.amazonaws.com/?Param2=value2&Param1=value1'), headers: {}, body: '' },
      { ...SUITE, service: 'service' },
      AT,
    );
    expect(query.authorization).toContain('Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500');
  });

  it('matches the IAM ListUsers documentation example', () => {
    const headers = signRequest(
      {
        method: 'GET',
        url: new URL('https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08'),
        headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8' },
        body: '',
      },
      { ...SUITE, service: 'iam' },
      AT,
    );
    expect(headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, ' +
        'Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7',
    );
  });
});
