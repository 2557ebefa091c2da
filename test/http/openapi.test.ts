import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** A test-only route with a full schema: it must appear in the generated document as declared. */
async function documentedRoute(app: FastifyInstance): Promise<void> {
  app.put(
    '/test/documented/:thingId',
    {
      schema: {
        tags: ['Test'],
        summary: 'Update a test thing',
        params: Type.Object({ thingId: Type.String() }),
        body: Type.Object({ name: Type.String() }),
        response: { 200: Type.Object({ data: Type.Object({ name: Type.String() }) }) },
      },
    },
    async (request) => ({ data: request.body }),
  );
}

/** The spec's operations and the Novu routes of issue 2, as OpenAPI paths. */
const SPEC_OPERATIONS: Array<[string, string]> = [
  ['put', '/v1/integrations/{integrationId}'],
  ['delete', '/v1/integrations/{integrationId}'],
  ['patch', '/v2/subscribers/{subscriberId}'],
  ['patch', '/v1/subscribers/{subscriberId}/online-status'],
  ['get', '/v1/messages'],
  ['post', '/v1/subscribers/{subscriberId}/messages/mark-as'],
  ['get', '/v1/notifications/{notificationId}'],
  ['get', '/v1/notifications'],
  ['delete', '/v1/messages/{messageId}'],
  ['post', '/v1/integrations'],
  ['get', '/v1/integrations'],
  ['get', '/v1/integrations/active'],
  ['post', '/v1/integrations/{integrationId}/set-primary'],
  ['post', '/v2/subscribers'],
  ['get', '/v2/subscribers/{subscriberId}'],
  ['delete', '/v2/subscribers/{subscriberId}'],
  ['get', '/v2/subscribers'],
  ['post', '/v1/events/trigger'],
];

const toFastifyUrl = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

describe('OpenAPI document and docs page', () => {
  let server: TestServer;
  let document: any;
  beforeAll(async () => {
    server = await startTestServer({ appOptions: { extraRoutes: [documentedRoute] } });
    const response = await server.request('GET', '/openapi.json', { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    document = JSON.parse(response.text);
  });
  afterAll(async () => server?.close());

  it('is OpenAPI 3.1 with its security schemes, ApiKey, Session or the dashboard cookie required by default', () => {
    expect(document.openapi).toMatch(/^3\.1\.\d+$/);
    expect(document.info).toMatchObject({ title: 'Herald API', version: expect.any(String) });
    expect(document.components.securitySchemes).toEqual({
      ApiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'Authorization' }),
      Session: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      SubscriberSession: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      DashboardSession: expect.objectContaining({ type: 'apiKey', in: 'cookie', name: 'herald_session' }),
    });
    expect(document.security).toEqual([{ ApiKey: [] }, { Session: [] }, { DashboardSession: [] }]);
  });

  it('documents every spec operation the app serves, generated from its schema', () => {
    const served = SPEC_OPERATIONS.filter(([method, path]) => server.app.hasRoute({ method: method.toUpperCase() as 'GET', url: toFastifyUrl(path) }));
    for (const [method, path] of served) {
      const operation = document.paths[path]?.[method];
      expect(operation, `${method.toUpperCase()} ${path}`).toBeDefined();
      expect(operation.responses, `${method.toUpperCase()} ${path}`).toBeDefined();
      expect(Object.keys(operation.responses).some((status) => status.startsWith('2')), `${method.toUpperCase()} ${path}`).toBe(true);
    }
    // No documented path the app does not serve.
    for (const [path, operations] of Object.entries<Record<string, unknown>>(document.paths)) {
      for (const method of Object.keys(operations).filter((key) => ['get', 'post', 'put', 'patch', 'delete'].includes(key))) {
        expect(server.app.hasRoute({ method: method.toUpperCase() as 'GET', url: toFastifyUrl(path) }), `${method} ${path}`).toBe(true);
      }
    }
  });

  it('takes a route from its TypeBox schema: tags, summary, params, body and response', () => {
    const operation = document.paths['/test/documented/{thingId}'].put;
    expect(operation).toMatchObject({ tags: ['Test'], summary: 'Update a test thing' });
    expect(operation.parameters).toEqual([expect.objectContaining({ name: 'thingId', in: 'path', required: true })]);
    expect(operation.requestBody.content['application/json'].schema).toMatchObject({ type: 'object', required: ['name'] });
    expect(operation.responses['200'].content['application/json'].schema.properties.data).toBeDefined();
  });

  it('marks /health as public and hides /openapi.json itself', () => {
    expect(document.paths['/health'].get.security).toEqual([]);
    expect(document.paths['/openapi.json']).toBeUndefined();
  });

  it('serves an HTML API reference at /docs', async () => {
    const response = await server.request('GET', '/docs', { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.text).toMatch(/<html/i);
  });
});
