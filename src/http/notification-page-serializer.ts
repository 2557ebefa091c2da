import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { TSchema } from '@sinclair/typebox';
import type { KeptEventText, NotificationEvent, Page } from '../domain/types.js';
import { PageEnvelope } from './schemas/common.js';
import { NotificationEventSchema } from './schemas/notification.js';

const compile = SerializerSelector()({}, undefined);
const serializerOf = (schema: TSchema) => compile({ schema, method: 'GET', url: '/v1/notifications', httpStatus: '200' } as never) as (value: unknown) => string;

const serializeEvent = serializerOf(NotificationEventSchema);
const serializeEnvelope = serializerOf(PageEnvelope(NotificationEventSchema));
const EMPTY_DATA = '"data":[]';

/**
 * An event as `GET /v1/notifications` writes it in its page: fast-json-stringify writes an array's items with the
 * serializer of the item schema, so this is the page's text for the event. The worker keeps it for events whose jobs
 * have all ended (keepEventText), and the page then writes the kept text as it is.
 */
export function serializeNotificationEvent(event: NotificationEvent): string {
  return serializeEvent(event);
}

/**
 * A page of `GET /v1/notifications`, byte for byte what the route's schema serializer writes for the same page of
 * events: the envelope as the schema writes it with no events, and inside its `data` array each event's text, kept
 * (written by serializeNotificationEvent when its jobs had all ended) or written now.
 */
export function serializeNotificationPage(page: Page<NotificationEvent | KeptEventText>): string {
  const envelope = serializeEnvelope({ ...page, data: [] });
  // Inside a JSON string every `"` is escaped, so the unescaped key found is the envelope's own.
  const at = envelope.indexOf(EMPTY_DATA);
  if (at < 0) throw new Error('notification page serializer: unexpected page envelope');
  const inside = at + EMPTY_DATA.length - 1;
  let json = envelope.slice(0, inside);
  for (let index = 0; index < page.data.length; index++) {
    const entry = page.data[index]!;
    if (index > 0) json += ',';
    json += 'keptText' in entry ? entry.keptText : serializeEvent(entry);
  }
  return json + envelope.slice(inside);
}
