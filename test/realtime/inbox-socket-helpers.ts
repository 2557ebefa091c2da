import { expect } from 'vitest';
import { io, type Socket } from 'socket.io-client';
import { createSubscriberToken } from '../../src/usecases/auth/subscriber-tokens.js';
import type { Deps } from '../../src/usecases/deps.js';

/**
 * A socket.io client opened the way @novu/js opens it (inbox-client-protocol.md §5.2): WebSocket transport only,
 * the subscriber session token in the handshake query. Every event it receives is recorded in order, so a test
 * can wait for one and later assert on everything that arrived.
 */
export interface InboxSocket {
  socket: Socket;
  events: Array<{ name: string; payload: any }>;
  /** Resolves with the first recorded event (at or after index `from`) named `name` that `matches`. */
  waitFor(name: string, matches?: (payload: any) => boolean, options?: { from?: number; timeoutMs?: number }): Promise<any>;
  close(): void;
}

export async function openInboxSocket(url: string, token: string | undefined, options: { origin?: string } = {}): Promise<InboxSocket> {
  const socket = io(url, {
    transports: ['websocket'],
    query: token === undefined ? {} : { token },
    reconnection: false,
    forceNew: true,
    timeout: 10_000,
    extraHeaders: options.origin ? { origin: options.origin } : undefined,
  });
  const events: InboxSocket['events'] = [];
  socket.onAny((name: string, payload: unknown) => events.push({ name, payload }));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', (error) => {
      socket.close();
      reject(error);
    });
  });
  return {
    socket,
    events,
    async waitFor(name, matches = () => true, { from = 0, timeoutMs = 10_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = events.slice(from).find((event) => event.name === name && matches(event.payload));
        if (found) return found.payload;
        if (Date.now() > deadline) {
          throw new Error(`no ${name} within ${timeoutMs} ms; received: ${JSON.stringify(events.map((event) => [event.name, event.payload]))}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    close: () => void socket.close(),
  };
}

/** The connect_error a refused handshake gives (the test fails when the socket connects). */
export async function refusedHandshake(url: string, token: string | undefined, options: { origin?: string } = {}): Promise<Error & { data?: any }> {
  try {
    const opened = await openInboxSocket(url, token, options);
    opened.close();
  } catch (error) {
    return error as Error & { data?: any };
  }
  throw new Error('the socket connected');
}

/** Calls Herald over HTTP (ApiKey or Bearer), for tests against test servers and real processes alike. */
export type HeraldCall = (method: string, path: string, body?: unknown, auth?: string) => Promise<{ status: number; body: any; text: string }>;

export function heraldCaller(url: string, secretKey: string): HeraldCall {
  return async (method, path, body, auth = `ApiKey ${secretKey}`) => {
    const headers: Record<string, string> = { authorization: auth };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    return { status: response.status, body: parsed, text };
  };
}

export const REALTIME_WORKFLOW = 'realtime-news';

/** An in-app workflow with a redirect and a primary action, so the raw message carries a full `cta`. */
export async function createRealtimeWorkflow(call: HeraldCall): Promise<void> {
  const response = await call('POST', '/v2/workflows', {
    workflowId: REALTIME_WORKFLOW,
    name: 'Realtime news',
    active: true,
    tags: ['news'],
    severity: 'high',
    steps: [
      {
        name: 'inbox',
        type: 'in_app',
        controlValues: {
          subject: 'News for {{ subscriber.firstName }}',
          body: 'Item {{ payload.item }}',
          redirect: { url: 'https://example.com/items/{{ payload.item }}' },
          primaryAction: { label: 'Open' },
        },
      },
    ],
  });
  expect(response.status, response.text).toBe(201);
}

export async function createSubscriber(call: HeraldCall, subscriberId: string, firstName = 'Ada'): Promise<void> {
  const response = await call('POST', '/v2/subscribers', { subscriberId, firstName });
  expect(response.status, response.text).toBe(201);
}

export async function triggerFor(call: HeraldCall, subscriberId: string, item: string): Promise<string> {
  const response = await call('POST', '/v1/events/trigger', { name: REALTIME_WORKFLOW, to: subscriberId, payload: { item } });
  expect(response.status, response.text).toBe(201);
  return response.body.data.transactionId;
}

/**
 * A subscriber session token minted with the server's key, as `POST /v1/inbox/session` mints it (that route has its
 * own tests; the browser and @novu/js tests go through it).
 */
export async function mintSubscriberToken(call: HeraldCall, deps: Pick<Deps, 'clock' | 'sessionSecret' | 'config'>, subscriberId: string): Promise<string> {
  const me = await call('GET', '/v1/environments/me');
  expect(me.status, me.text).toBe(200);
  const subscriber = await call('GET', `/v2/subscribers/${encodeURIComponent(subscriberId)}`);
  expect(subscriber.status, subscriber.text).toBe(200);
  return createSubscriberToken(deps, {
    environmentId: me.body.data._id,
    organizationId: me.body.data._organizationId,
    subscriberRecordId: subscriber.body.data._id,
    subscriberId,
  });
}

/** The subscriber's session token, from `POST /v1/inbox/session` with the environment's application identifier. */
export async function inboxSession(call: HeraldCall, url: string, subscriberId: string): Promise<string> {
  const me = await call('GET', '/v1/environments/me');
  expect(me.status, me.text).toBe(200);
  const response = await fetch(`${url}/v1/inbox/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ applicationIdentifier: me.body.data.identifier, subscriber: { subscriberId } }),
  });
  const text = await response.text();
  expect(response.status, text).toBeLessThan(300);
  return JSON.parse(text).data.token;
}

/** The in-app messages of a subscriber through the server-side API, newest first. */
export async function inAppMessages(call: HeraldCall, subscriberId: string): Promise<any[]> {
  const response = await call('GET', `/v1/messages?subscriberId=${encodeURIComponent(subscriberId)}&channel=in_app&limit=100`);
  expect(response.status, response.text).toBe(200);
  return response.body.data;
}
