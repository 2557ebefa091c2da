import { expect } from 'vitest';
import type { TestServer } from '../helpers/test-server.js';

/** Creates a workflow through the API and returns its workflowId. */
export async function createWorkflow(server: TestServer, body: Record<string, unknown>, key?: string): Promise<string> {
  const response = await server.request('POST', '/v2/workflows', { body: { name: String(body.workflowId), ...body }, key });
  expect(response.status, response.text).toBe(201);
  return String(body.workflowId);
}

export async function trigger(server: TestServer, body: Record<string, unknown>, key?: string) {
  return server.request('POST', '/v1/events/trigger', { body, key });
}

/** The events of a transaction, read back through GET /v1/notifications. */
export async function eventsOf(server: TestServer, transactionId: string, key?: string): Promise<any[]> {
  const response = await server.request('GET', `/v1/notifications?transactionId=${encodeURIComponent(transactionId)}&limit=50&before=2100-01-01T00:00:00.000Z`, { key });
  expect(response.status, response.text).toBe(200);
  return response.body.data;
}

export async function messagesOf(server: TestServer, transactionId: string, key?: string): Promise<any[]> {
  const response = await server.request('GET', `/v1/messages?transactionId=${encodeURIComponent(transactionId)}&limit=100`, { key });
  expect(response.status, response.text).toBe(200);
  return response.body.data;
}

export function detailTexts(job: { executionDetails: Array<{ status: string; detail: string }> }): string[] {
  return job.executionDetails.map((detail) => `${detail.status}: ${detail.detail}`);
}
