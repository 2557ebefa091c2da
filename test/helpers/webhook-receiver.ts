import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { startHttpFake, type FakeReply, type HttpFake, type RecordedRequest } from '../fakes/http-fake.js';

/** One webhook the receiver got: its body parsed, and whether each verifier accepted it with the secrets given. */
export interface ReceivedWebhook {
  path: string;
  id: string;
  timestamp: string;
  signatures: string[];
  headers: Record<string, string>;
  body: any;
  raw: string;
  /** Which of `secrets` (by position) both standardwebhooks and svix accepted the request with. */
  verifiedWith: number[];
}

export interface WebhookReceiver {
  url: string;
  fake: HttpFake;
  received: ReceivedWebhook[];
  /** The secrets to verify with (set after creating endpoints; rotations add theirs). */
  secrets: string[];
  /** Answers with this (default 204); `'hang'` never answers. */
  reply: (request: RecordedRequest) => FakeReply | 'hang' | Promise<FakeReply | 'hang'>;
  /** Resolves once `count` webhooks matching `filter` have arrived. */
  waitFor(filter: (webhook: ReceivedWebhook) => boolean, count?: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/**
 * A local node:http receiver that verifies every request with the npm `standardwebhooks` package AND svix's
 * `Webhook.verify`, the way a customer's receiver would.
 */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const receiver: WebhookReceiver = {
    url: '',
    fake: undefined as unknown as HttpFake,
    received: [],
    secrets: [],
    reply: () => ({ status: 204 }),
    async waitFor(filter, count = 1, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const matches = receiver.received.filter(filter);
        if (matches.length >= count) return matches;
        if (Date.now() > deadline) {
          throw new Error(`waited ${timeoutMs} ms for ${count} webhook(s), got ${matches.length}; all: ${receiver.received.map((w) => w.body?.type).join(', ')}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: () => receiver.fake.close(),
  };
  receiver.fake = await startHttpFake((request) => {
    const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(',') : (value ?? '')]));
    const verifiedWith: number[] = [];
    receiver.secrets.forEach((secret, index) => {
      if (accepts(() => new StandardWebhook(secret).verify(request.body, headers)) && accepts(() => new SvixWebhook(secret).verify(request.body, headers))) verifiedWith.push(index);
    });
    let body: unknown;
    try {
      body = JSON.parse(request.body);
    } catch {
      body = undefined;
    }
    receiver.received.push({
      path: request.path,
      id: headers['webhook-id'],
      timestamp: headers['webhook-timestamp'],
      signatures: (headers['webhook-signature'] ?? '').split(' ').filter(Boolean),
      headers,
      body,
      raw: request.body,
      verifiedWith,
    });
    return receiver.reply(request);
  });
  receiver.url = receiver.fake.url;
  return receiver;
}

function accepts(verify: () => unknown): boolean {
  try {
    verify();
    return true;
  } catch {
    return false;
  }
}
