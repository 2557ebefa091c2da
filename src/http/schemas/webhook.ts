import { Type, type Static } from '@sinclair/typebox';
import { WEBHOOK_EVENT_TYPES, type WebhookAttempt, type WebhookEndpoint } from '../../domain/webhooks.js';
import { IsoDateTime } from './common.js';

/**
 * `/v2/webhooks`: outbound webhook endpoints, their attempts and the event catalogue (docs/webhooks.md). An endpoint's
 * secret is only in the create answer and `GET .../secret`.
 */

const EventTypes = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  maxItems: WEBHOOK_EVENT_TYPES.length,
  description: 'Event types this endpoint receives (GET /v2/webhooks/event-types); absent or empty: all',
});
const Headers = Type.Record(Type.String(), Type.String({ maxLength: 4096 }), { description: 'Extra request headers sent with every event' });
const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL the events are POSTed to' });

export const EndpointParams = Type.Object({ id: Type.String() });
export const AttemptParams = Type.Object({ id: Type.String() });

export const CreateEndpointBody = Type.Object({
  url: Url,
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  eventTypes: Type.Optional(EventTypes),
  enabled: Type.Optional(Type.Boolean({ default: true })),
  headers: Type.Optional(Headers),
});
export type CreateEndpointBody = Static<typeof CreateEndpointBody>;

export const UpdateEndpointBody = Type.Object({
  url: Type.Optional(Url),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  eventTypes: Type.Optional(EventTypes),
  enabled: Type.Optional(Type.Boolean()),
  headers: Type.Optional(Headers),
});

export const EndpointResponse = Type.Object({
  _id: Type.String(),
  url: Type.String(),
  description: Type.String(),
  eventTypes: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  headers: Type.Record(Type.String(), Type.String()),
  disabledReason: Type.Optional(Type.String({ description: 'Why Herald disabled the endpoint (every attempt failed for 5 days)' })),
  failingSince: Type.Optional(IsoDateTime),
  createdAt: IsoDateTime,
  updatedAt: IsoDateTime,
});

export const CreatedEndpointResponse = Type.Composite([EndpointResponse, Type.Object({ secret: Type.String({ description: 'whsec_ + base64' }) })]);

export const SecretResponse = Type.Object({ secret: Type.String() });

export const AttemptResponse = Type.Object({
  _id: Type.String(),
  endpointId: Type.String(),
  eventType: Type.String(),
  webhookId: Type.String({ description: 'The event id: its `webhook-id` header, the same on every retry' }),
  attempt: Type.Integer({ description: '1-based position in the retry schedule' }),
  status: Type.Union([Type.Literal('success'), Type.Literal('failed'), Type.Literal('pending')]),
  responseStatusCode: Type.Optional(Type.Integer()),
  durationMs: Type.Integer(),
  responseBodySnippet: Type.String({ description: 'The answer, truncated to 1 KiB' }),
  error: Type.Optional(Type.String()),
  dueAt: IsoDateTime,
  createdAt: IsoDateTime,
  finishedAt: Type.Optional(IsoDateTime),
});

export const ListAttemptsQuery = Type.Object({
  status: Type.Optional(Type.Union([Type.Literal('success'), Type.Literal('failed'), Type.Literal('pending')])),
  page: Type.Integer({ minimum: 0, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
});

export const AttemptPage = Type.Object({
  data: Type.Array(AttemptResponse),
  page: Type.Integer(),
  pageSize: Type.Integer(),
  hasMore: Type.Boolean(),
});

export const RecoverBody = Type.Object({ since: Type.String({ format: 'date-time', description: 'ISO 8601: failed events since then are sent again' }) });
export const RecoverResponse = Type.Object({ recovered: Type.Integer({ description: 'How many events were queued again' }) });

export const EventTypeResponse = Type.Object({ type: Type.String(), description: Type.String() });

export function toEndpointResponse(endpoint: WebhookEndpoint): Static<typeof EndpointResponse> {
  const view: Static<typeof EndpointResponse> = {
    _id: endpoint._id,
    url: endpoint.url,
    description: endpoint.description,
    eventTypes: endpoint.eventTypes,
    enabled: endpoint.enabled,
    headers: endpoint.headers,
    createdAt: endpoint.createdAt,
    updatedAt: endpoint.updatedAt,
  };
  if (endpoint.disabledReason) view.disabledReason = endpoint.disabledReason;
  if (endpoint.failingSince) view.failingSince = endpoint.failingSince;
  return view;
}

export function toAttemptResponse(attempt: WebhookAttempt): Static<typeof AttemptResponse> {
  const view: Static<typeof AttemptResponse> = {
    _id: attempt._id,
    endpointId: attempt._endpointId,
    eventType: attempt.eventType,
    webhookId: attempt.webhookId,
    attempt: attempt.attempt,
    status: attempt.status,
    durationMs: attempt.durationMs,
    responseBodySnippet: attempt.responseBodySnippet,
    dueAt: attempt.dueAt,
    createdAt: attempt.createdAt,
  };
  if (attempt.responseStatusCode !== undefined) view.responseStatusCode = attempt.responseStatusCode;
  if (attempt.error) view.error = attempt.error;
  if (attempt.finishedAt) view.finishedAt = attempt.finishedAt;
  return view;
}
