import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createWebhookSender } from '../../src/webhooks/http-sender.js';
import type { WebhookSender } from '../../src/webhooks/ports.js';
import { startHttpFake, type FakeReply, type HttpFake } from '../fakes/http-fake.js';

/** The webhook sender against a real local HTTP server: what reaches it, timeouts, redirects, long answers, the guard. */
let fake: HttpFake;
let reply: () => FakeReply | 'hang' = () => ({ status: 204 });
let sender: WebhookSender;

beforeAll(async () => {
  fake = await startHttpFake(() => reply());
  sender = createWebhookSender(loadConfig({ HERALD_OUTBOUND_ALLOW: '127.0.0.1', HERALD_WEBHOOK_TIMEOUT_MS: '300' }));
});
afterAll(async () => {
  await fake?.close();
});

describe('webhook sender', () => {
  it('POSTs the body with its headers, JSON content type and the user agent; answers status and body', async () => {
    reply = () => ({ status: 200, body: 'thanks' });
    const before = fake.requests.length;
    const response = await sender.send({ url: `${fake.url}/hook?x=1`, headers: { 'webhook-id': 'msg_1', 'x-custom': 'yes' }, body: '{"a":1}' });
    expect(response).toMatchObject({ statusCode: 200, body: 'thanks' });
    expect(response.error).toBeUndefined();
    const request = fake.requests[before];
    expect(request).toMatchObject({ method: 'POST', path: '/hook?x=1', body: '{"a":1}' });
    expect(request.headers).toMatchObject({ 'webhook-id': 'msg_1', 'x-custom': 'yes', 'content-type': 'application/json' });
    expect(request.headers['user-agent']).toMatch(/herald/i);
  });

  it('a receiver that does not answer in time is a retryable failure naming the timeout', async () => {
    reply = () => 'hang';
    const response = await sender.send({ url: `${fake.url}/slow`, headers: {}, body: '{}' });
    expect(response.statusCode).toBeUndefined();
    expect(response.error).toMatch(/timed out after 300 ms/);
    expect(response.refused).toBe(false);
  });

  it('a redirect is not followed: its status is the answer', async () => {
    reply = () => ({ status: 302, headers: { location: `${fake.url}/elsewhere` } });
    const before = fake.requests.length;
    const response = await sender.send({ url: `${fake.url}/moved`, headers: {}, body: '{}' });
    expect(response.statusCode).toBe(302);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fake.requests.length - before).toBe(1);
  });

  it('reads at most 64 KiB of a long answer', async () => {
    reply = () => ({ status: 500, body: 'x'.repeat(1_000_000) });
    const response = await sender.send({ url: `${fake.url}/long`, headers: {}, body: '{}' });
    expect(response.statusCode).toBe(500);
    expect(response.body.length).toBeGreaterThanOrEqual(64 * 1024);
    expect(response.body.length).toBeLessThan(200 * 1024);
  });

  it('a private address is refused without a request, and marked as refused', async () => {
    const before = fake.requests.length;
    const response = await sender.send({ url: 'http://10.0.0.1/hook', headers: {}, body: '{}' });
    expect(response).toMatchObject({ refused: true, error: expect.stringMatching(/refused: private address/) });
    expect(response.statusCode).toBeUndefined();
    expect(fake.requests.length).toBe(before);
  });
});
