import { Type } from '@sinclair/typebox';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedSerializerBuilder } from '../../src/http/shared-serializers.js';
import { commonErrorResponses, DataEnvelope, ErrorBody } from '../../src/http/schemas/common.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Response schemas with the same JSON share one compiled serializer (src/http/shared-serializers.ts): each of
 * ~1,700 route × status serializers cost an Ajv instance and generated code of its own in an idle process.
 */
const Item = () => Type.Object({ id: Type.String(), count: Type.Integer(), tags: Type.Array(Type.String()) });
const route = (schema: unknown, url: string, httpStatus = '200') => ({ schema, method: 'GET', url, httpStatus });

describe('sharedSerializerBuilder', () => {
  const external = { ErrorBody };
  const compile = sharedSerializerBuilder()(external, {});

  it('gives routes with equal schemas (separate objects) one serializer, and different schemas their own', () => {
    const first = compile(route(DataEnvelope(Item()), '/a'));
    const second = compile(route(DataEnvelope(Item()), '/b', '201'));
    expect(second).toBe(first);
    expect(compile(route(Type.Ref('ErrorBody'), '/a', '404'))).toBe(compile(route(Type.Ref('ErrorBody'), '/b', '409')));
    expect(compile(route(DataEnvelope(Type.Object({ id: Type.String() })), '/c'))).not.toBe(first);
  });

  it('shares across the compilers fastify asks for with the same shared schemas, and not across different ones', () => {
    const builder = sharedSerializerBuilder();
    const errorRoute = () => route(Type.Ref('ErrorBody'), '/a', '404');
    const first = builder({ ErrorBody }, undefined)(errorRoute());
    expect(builder({ ErrorBody }, undefined)(errorRoute())).toBe(first);
    const OtherErrorBody = Type.Object({ message: Type.String() }, { $id: 'ErrorBody' });
    const other = builder({ ErrorBody: OtherErrorBody }, undefined)(errorRoute());
    expect(other).not.toBe(first);
    expect(other({ message: 'm', statusCode: 404 })).toBe('{"message":"m"}');
  });

  it('answers the bytes fastify’s own serializer answers', () => {
    const defaultCompile = SerializerSelector()(external, {});
    const document = { data: { id: 'x"1', count: 3, tags: ['a', 'b'], extra: 'not in the schema' } };
    expect(compile(route(DataEnvelope(Item()), '/d'))(document)).toBe(defaultCompile(route(DataEnvelope(Item()), '/d'))(document));
    const error = { statusCode: 404, timestamp: 't', path: '/x', message: ['a', 'b'], error: 'Not Found' };
    expect(compile(route(Type.Ref('ErrorBody'), '/e', '404'))(error)).toBe(defaultCompile(route(Type.Ref('ErrorBody'), '/e', '404'))(error));
  });
});

describe('the app’s routes', () => {
  let server: TestServer;
  const seen: Record<string, { ok: unknown; notFound: unknown; conflict: unknown }> = {};

  /** Two routes declaring the same responses the way Herald's routes do (a DataEnvelope and the common errors). */
  async function probeRoutes(app: FastifyInstance): Promise<void> {
    for (const name of ['first', 'second']) {
      app.get(`/test/serializers/${name}`, { config: { public: true }, schema: { response: { 200: DataEnvelope(Item()), ...commonErrorResponses } } }, async (_request, reply) => {
        seen[name] = { ok: reply.getSerializationFunction('200'), notFound: reply.getSerializationFunction('404'), conflict: reply.getSerializationFunction('409') };
        return { data: { id: name, count: 1, tags: [] } };
      });
    }
  }

  beforeAll(async () => {
    server = await startTestServer({ appOptions: { extraRoutes: [probeRoutes] } });
  });
  afterAll(async () => server?.close());

  it('share one serializer per distinct response schema', async () => {
    for (const name of ['first', 'second']) {
      const response = await server.request('GET', `/test/serializers/${name}`, { key: null });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ data: { id: name, count: 1, tags: [] } });
    }
    expect(seen.first!.ok).toEqual(expect.any(Function));
    expect(seen.second!.ok).toBe(seen.first!.ok);
    expect(seen.first!.notFound).toEqual(expect.any(Function));
    expect(seen.second!.notFound).toBe(seen.first!.notFound);
    expect(seen.first!.conflict).toBe(seen.first!.notFound);
  });
});
