import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { PageEnvelope } from '../../src/http/schemas/common.js';
import { MessageSchema } from '../../src/http/schemas/message.js';

/** The `GET /v1/messages` route's serializer before its fast path: fast-json-stringify over the response schema, as Fastify compiles it. */
export const messagePageSchemaSerializer = SerializerSelector()({}, undefined)({
  schema: PageEnvelope(MessageSchema, { totalCount: true }),
  method: 'GET',
  url: '/v1/messages',
  httpStatus: '200',
} as never) as (page: unknown) => string;
