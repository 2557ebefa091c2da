import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { newWebhookSecret, signature, signatureHeaders } from '../../src/domain/webhook-signing.js';
import { endpointAccepts, retryDelayBefore, shouldDisable, snippetOf } from '../../src/domain/webhooks.js';

describe('Standard Webhooks signing', () => {
  it('matches the standardwebhooks reference signer and verifies with it and with svix', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = JSON.stringify({ id: 'evt_1', type: 'message.sent', data: { object: { é: 'ü' } } });
    const now = Math.floor(Date.now() / 1000);
    expect(signature(secret, 'evt_1', now, body)).toBe(new Webhook(secret).sign('evt_1', new Date(now * 1000), body));
    const headers = signatureHeaders([secret], 'evt_1', now, body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new SvixWebhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(body.replace('sent', 'read'), headers)).toThrow();
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
  });

  it('two secrets: space-separated, each verifies on its own', () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    const now = Math.floor(Date.now() / 1000);
    const headers = signatureHeaders([current, previous], 'evt_2', now, '{}');
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(current).verify('{}', headers)).toEqual({});
    expect(new SvixWebhook(previous).verify('{}', headers)).toEqual({});
  });
});

describe('webhook rules', () => {
  it('filters, the retry schedule, disabling and snippets', () => {
    expect(endpointAccepts([], 'message.sent')).toBe(true);
    expect(endpointAccepts(['message.read'], 'message.sent')).toBe(false);
    const schedule = [0, 5_000, 300_000];
    expect([1, 2, 3, 4].map((n) => retryDelayBefore(schedule, n))).toEqual([0, 5_000, 300_000, undefined]);
    const since = '2026-01-01T00:00:00.000Z';
    expect(shouldDisable(since, Date.parse(since) + 5 * 86_400_000 - 1, 5 * 86_400_000)).toBe(false);
    expect(shouldDisable(since, Date.parse(since) + 5 * 86_400_000, 5 * 86_400_000)).toBe(true);
    expect(shouldDisable(undefined, Date.now(), 0)).toBe(false);
    expect(snippetOf('short')).toBe('short');
    expect(snippetOf('y'.repeat(3000))).toMatch(/^y{1024}…\[truncated 1976 chars\]$/);
  });
});
