import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  ActivitiesResponseDto$inboundSchema,
  ActivityNotificationResponseDto$inboundSchema,
  DeleteMessageResponseDto$inboundSchema,
  MessageResponseDto$inboundSchema,
  MessagesResponseDto$inboundSchema,
} from '@novu/api/models/components/index.js';
import type { NotificationEvent, Subscriber } from '../../src/domain/types.js';
import { insertMessage, insertNotificationEvent, insertSubscriber, scopeOf } from '../helpers/factories.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The message and event responses parsed by the official SDK's own response schemas: a missing required
 * field, a wrong type or an out-of-range enum in any channel's message or any job shape fails here.
 */
let server: TestServer;
let subscriber: Subscriber;
let event: NotificationEvent;

beforeAll(async () => {
  server = await startTestServer();
  const scope = await scopeOf(server.deps.store, server.devEnvironmentId);
  subscriber = await insertSubscriber(server.deps.store, scope, { subscriberId: 'sdk-shapes' });
  for (const channel of ['in_app', 'email', 'sms', 'chat', 'push'] as const) await insertMessage(server.deps.store, subscriber, { channel });
  await insertMessage(server.deps.store, subscriber, { channel: 'email', status: 'error', errorId: 'E', errorText: 'bounced', content: 'plain' });
  event = await insertNotificationEvent(server.deps.store, subscriber, {
    channels: ['trigger', 'digest', 'delay', 'email', 'in_app'],
    topics: [{ _topicId: 'topic-id', topicKey: 'news' }],
    severity: 'high',
  });
});
afterAll(async () => {
  await server?.close();
});

interface ResponseSchema {
  safeParse(value: unknown): { success: true } | { success: false; error: { issues: unknown[] } };
}

function expectParses(schema: ResponseSchema, value: unknown): void {
  const result = schema.safeParse(value);
  expect(result.success ? [] : result.error.issues).toEqual([]);
}

it('GET /v1/messages parses as MessagesResponseDto', async () => {
  const response = await server.request('GET', '/v1/messages');
  expect(response.body.data).toHaveLength(6);
  expectParses(MessagesResponseDto$inboundSchema, response.body);
});

it('mark-as and delete answers parse as MessageResponseDto and DeleteMessageResponseDto', async () => {
  const list = await server.request('GET', '/v1/messages?channel=in_app');
  const marked = await server.request('POST', '/v1/subscribers/sdk-shapes/messages/mark-as', { body: { messageId: list.body.data[0]._id, markAs: 'read' } });
  expect(marked.status).toBe(201);
  for (const message of marked.body.data) expectParses(MessageResponseDto$inboundSchema, message);
  const deleted = await server.request('DELETE', `/v1/messages/${list.body.data[0]._id}`);
  expectParses(DeleteMessageResponseDto$inboundSchema, deleted.body.data);
});

it('GET /v1/notifications and /v1/notifications/{id} parse as ActivitiesResponseDto and ActivityNotificationResponseDto', async () => {
  const list = await server.request('GET', '/v1/notifications');
  expect(list.body.data).toHaveLength(1);
  expectParses(ActivitiesResponseDto$inboundSchema, list.body);
  const one = await server.request('GET', `/v1/notifications/${event._id}`);
  expectParses(ActivityNotificationResponseDto$inboundSchema, one.body.data);
});
