import { expect } from 'vitest';
import type { TestServer } from '../../helpers/test-server.js';
import { eventsOf, messagesOf, trigger } from '../engine-helpers.js';

/** The env every delivery test server runs with: fakes live on 127.0.0.1, retries are fast. */
export function deliveryEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    HERALD_QUEUE_POLL_MS: '20',
    HERALD_OUTBOUND_ALLOW: '127.0.0.1',
    HERALD_JOB_ATTEMPTS: '1',
    HERALD_JOB_BACKOFF_MS: '20',
    HERALD_OUTBOUND_TIMEOUT_MS: '3000',
    ...extra,
  };
}

/** Creates an active integration through the API without a live check; returns its record. */
export async function createIntegration(server: TestServer, body: Record<string, unknown>): Promise<any> {
  const response = await server.request('POST', '/v1/integrations', { body: { active: true, check: false, ...body } });
  expect(response.status, response.text).toBe(201);
  return response.body.data;
}

export async function createSubscriber(server: TestServer, body: Record<string, unknown>): Promise<any> {
  const response = await server.request('POST', '/v2/subscribers', { body });
  expect(response.status, response.text).toBe(201);
  return response.body.data;
}

/** PUT /v1/subscribers/{id}/credentials. */
export async function setChannelCredentials(
  server: TestServer,
  subscriberId: string,
  body: { providerId: string; integrationIdentifier?: string; credentials: Record<string, unknown> },
): Promise<void> {
  const response = await server.request('PUT', `/v1/subscribers/${subscriberId}/credentials`, { body });
  expect(response.status, response.text).toBe(200);
}

export async function getSubscriber(server: TestServer, subscriberId: string): Promise<any> {
  const response = await server.request('GET', `/v2/subscribers/${subscriberId}`);
  expect(response.status, response.text).toBe(200);
  return response.body.data;
}

export interface Delivery {
  transactionId: string;
  event: any;
  /** The event's last job (the channel step in one-step workflows). */
  job: any;
  messages: any[];
}

/** Triggers, waits for the worker, and reads back the event (GET /v1/notifications/{id}) and messages (GET /v1/messages). */
export async function triggerAndSettle(server: TestServer, body: Record<string, unknown>, timeoutMs = 10_000): Promise<Delivery> {
  const response = await trigger(server, body);
  expect(response.status, response.text).toBe(201);
  const { transactionId } = response.body.data;
  await server.waitForIdle({ timeoutMs });
  const [listed] = await eventsOf(server, transactionId);
  expect(listed, `event of ${transactionId}`).toBeDefined();
  const single = await server.request('GET', `/v1/notifications/${listed._id}`);
  expect(single.status, single.text).toBe(200);
  const event = single.body.data;
  return { transactionId, event, job: event.jobs.at(-1), messages: await messagesOf(server, transactionId) };
}

/** The job's execution details after the Pending/Queued bookkeeping ones. */
export function outcomeDetails(job: any): any[] {
  return job.executionDetails.filter((detail: any) => detail.status !== 'Pending' && detail.status !== 'Queued');
}
