import { Type, type TSchema, type Static } from '@sinclair/typebox';

/**
 * Building blocks shared by every resource's schemas. Envelopes follow API-CONVENTIONS.md: a record or
 * an array is `{ data }`; a paginated list has its page fields at the top level.
 */
export const DataEnvelope = <T extends TSchema>(data: T) => Type.Object({ data });

export const PageEnvelope = <T extends TSchema>(item: T, options: { totalCount?: boolean } = {}) =>
  Type.Object({
    data: Type.Array(item),
    page: Type.Integer(),
    pageSize: Type.Integer(),
    hasMore: Type.Boolean(),
    ...(options.totalCount ? { totalCount: Type.Integer() } : { totalCount: Type.Optional(Type.Integer()) }),
  });

export const IsoDateTime = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' });

export const FreeObject = Type.Object({}, { additionalProperties: true });

/** The one error body of API-CONVENTIONS.md. */
export const ErrorBody = Type.Object(
  {
    statusCode: Type.Integer(),
    timestamp: Type.String(),
    path: Type.String(),
    message: Type.Union([Type.String(), Type.Array(Type.String())]),
    error: Type.String(),
    errorId: Type.Optional(Type.String()),
    errors: Type.Optional(Type.Record(Type.String(), Type.Object({ messages: Type.Array(Type.String()), value: Type.Unknown() }))),
  },
  { $id: 'ErrorBody' },
);
export type ErrorBody = Static<typeof ErrorBody>;

/** Error responses every authenticated route can give; spread into a route's `response`. */
export const commonErrorResponses = {
  400: Type.Ref('ErrorBody'),
  401: Type.Ref('ErrorBody'),
  403: Type.Ref('ErrorBody'),
  404: Type.Ref('ErrorBody'),
  409: Type.Ref('ErrorBody'),
  413: Type.Ref('ErrorBody'),
  415: Type.Ref('ErrorBody'),
  422: Type.Ref('ErrorBody'),
  429: Type.Ref('ErrorBody'),
  500: Type.Ref('ErrorBody'),
  503: Type.Ref('ErrorBody'),
};

/** The optional header every operation accepts. */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ description: 'Replays the first answer for 24 hours (see docs/api-conventions.md)' })),
});

export const Acknowledged = Type.Object({ acknowledged: Type.Boolean(), status: Type.String() });
