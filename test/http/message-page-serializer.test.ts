import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { messagePageSchemaSerializer } from '../helpers/message-page.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageOf, type ListedMessage, type StoredMessage } from '../../src/domain/stored-message.js';
import type { Message, Page, Subscriber } from '../../src/domain/types.js';
import { jsonFields, readJsonFields } from '../../src/http/json-fields.js';
import { messageListText, serializeMessagePage } from '../../src/http/message-page-serializer.js';
import { insertMessage, insertSubscriber, scopeOf } from '../helpers/factories.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const schemaSerializer = messagePageSchemaSerializer;

const reference = (page: Page<StoredMessage>) => schemaSerializer({ ...page, data: page.data.map(messageOf) });

/**
 * The page as the store lists it: each message with its list text (as written with the message, without its
 * subscriber), or, with `texts` false or for a message without one, its columns and document.
 */
function listed(page: Page<StoredMessage>, texts: boolean): Page<ListedMessage> {
  return {
    ...page,
    data: page.data.map(({ subscriber, ...stored }) => {
      const text = texts ? messageListText(stored) : undefined;
      return { subscriberRecordId: stored.columns._subscriberId, ...(subscriber ? { subscriber } : {}), ...(text !== undefined ? { text } : { stored }) };
    }),
  };
}

/** A small deterministic random source, so a failure names a reproducible case. */
function randomSource(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  const pick = <T,>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
  return { next, pick, chance: (p: number) => next() < p };
}

const STRINGS = [
  '', 'a', 'plain text', 'quote " and backslash \\ inside', 'tab\tnew\nline\r\u0000\u001f', 'é ü 漢字 🎉', 'lone \ud800 surrogate',
  'trailing \udc00', 'line sep \u2028 para \u2029', 'del \u007f', 'x'.repeat(41), 'y'.repeat(42), `${'z'.repeat(60)}"`, 'w'.repeat(5001),
  `${'v'.repeat(5001)}\n`, '</script>', '\\', '"', '{"looks":"like json"}', '1e21',
];
const NUMBERS = [0, -0, 1, -1, 1.5, 1e21, 1e-7, 123456789012345680000, Number.MAX_SAFE_INTEGER, 0.1 + 0.2];

function randomValue(r: ReturnType<typeof randomSource>, depth: number): unknown {
  const kind = r.pick(depth > 2 ? ['string', 'number', 'bool', 'null'] : ['string', 'number', 'bool', 'null', 'object', 'array']);
  if (kind === 'string') return r.pick(STRINGS);
  if (kind === 'number') return r.pick(NUMBERS);
  if (kind === 'bool') return r.chance(0.5);
  if (kind === 'null') return null;
  if (kind === 'array') return Array.from({ length: Math.floor(r.next() * 4) }, () => randomValue(r, depth + 1));
  return randomObject(r, depth + 1);
}

function randomObject(r: ReturnType<typeof randomSource>, depth: number): Record<string, unknown> {
  const keys = ['a', 'b', '10', '2', 'key "q"', 'k\\b', 'ключ', '__proto__x', 'steps', 'name', ''];
  const object: Record<string, unknown> = {};
  for (let i = Math.floor(r.next() * 5); i > 0; i--) object[r.pick(keys)] = randomValue(r, depth);
  return object;
}

function randomSubscriber(r: ReturnType<typeof randomSource>, id: string): Subscriber {
  return {
    _id: id,
    subscriberId: r.pick(['ada', 'grace "g"', 'ü-1']),
    _organizationId: 'org0000000000000000000001',
    _environmentId: 'env0000000000000000000001',
    firstName: r.pick([null, 'Ada', undefined, 'with "quotes"']) as string | null,
    lastName: r.pick([null, undefined, 'Lovelace']) as string | null,
    email: r.pick([null, 'ada@example.com']),
    channels: r.chance(0.5) ? [] : [{ providerId: 'slack', credentials: { webhookUrl: 'https://hooks', extra: 1 } as never, _integrationId: 'int1' }],
    topics: [],
    isOnline: r.pick([null, true, false, undefined]) as boolean | null,
    __v: 0,
    data: r.pick([null, undefined, { plan: 'pro', n: 1.5 }]) as Record<string, unknown> | null,
    deleted: false,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-02T00:00:00.000Z',
  };
}

/** A stored message with a random mix of every document field, some of the wrong type, some unknown. */
function randomStored(r: ReturnType<typeof randomSource>, index: number, subscribers: Subscriber[]): StoredMessage {
  const channel = r.pick(['in_app', 'email', 'sms', 'chat', 'push'] as const);
  const subscriber = r.pick(subscribers);
  const document: Record<string, unknown> = {};
  const maybe = (name: string, value: () => unknown, p = 0.5) => {
    if (r.chance(p)) document[name] = value();
  };
  maybe('_messageTemplateId', () => r.pick([null, 'tmpl1', 42]));
  maybe('template', () => r.pick([randomObject(r, 0), { _id: 't', steps: [{ template: { type: 'in_app', body: r.pick(STRINGS) } }] }, 'not an object', null]));
  maybe('templateIdentifier', () => r.pick(STRINGS));
  maybe('deliveredAt', () => r.pick([[], ['2026-01-01T00:00:00.000Z'], ['a', 'b'], [1, 'b']]));
  maybe('lastSeenDate', () => '2026-01-03T00:00:00.000Z');
  maybe('lastReadDate', () => r.pick(['2026-01-03T00:00:00.000Z', null]), 0.3);
  maybe('content', () => r.pick([r.pick(STRINGS), [{ type: 'text', content: 'hi' }, { type: 'button', content: 'Go', url: 'https://x', extra: true }], [{ type: 'text', content: 'a', styles: { textAlign: 'left' } }]]));
  maybe('subject', () => r.pick([...STRINGS, 42, true]));
  maybe('snoozedUntil', () => '2026-02-01T00:00:00.000Z', 0.2);
  maybe('email', () => 'ada@example.com', 0.2);
  maybe('phone', () => '+15550100', 0.2);
  maybe('directWebhookUrl', () => 'https://hooks.example.com/x', 0.2);
  maybe('providerId', () => r.pick(['novu', 'sendgrid']));
  maybe('title', () => r.pick(STRINGS), 0.2);
  maybe('deviceTokens', () => ['t1', 't"2'], 0.2);
  maybe('cta', () => r.pick([{}, null, { type: 'redirect', data: { url: 'https://x', more: [1, { a: null }] } }, { action: { status: 'pending', buttons: [{ type: 'primary', content: 'Yes', extra: 1 }], result: { payload: { a: 1 }, type: 'secondary' } }, unknown: 1 }]), 0.8);
  maybe('_feedId', () => r.pick([null, 'feed1']));
  maybe('errorId', () => 'E1', 0.2);
  maybe('errorText', () => r.pick(STRINGS), 0.2);
  maybe('payload', () => r.pick([randomObject(r, 0), {}, { n: 1, text: 'x'.repeat(200) }]));
  maybe('overrides', () => r.pick([{}, randomObject(r, 0)]));
  maybe('contextKeys', () => r.pick([[], ['tenant:acme'], ['a', 'b']]));
  maybe('archivedAt', () => '2026-01-04T00:00:00.000Z', 0.2);
  maybe('firstSeenDate', () => '2026-01-03T00:00:00.000Z', 0.2);
  maybe('tags', () => r.pick([[], ['billing', 'x"y']]));
  maybe('severity', () => r.pick(['none', 'high', 'low']));
  maybe('data', () => randomObject(r, 0), 0.3);
  maybe('avatar', () => 'https://img', 0.2);
  maybe('identifier', () => 'vendor-1', 0.2);
  maybe('providerStatus', () => r.pick(['delivered', 'opened']), 0.2);
  // Fields not in the response schema, and (older rows) fields a column overrides.
  maybe('step', () => ({ _id: 's1', active: true }), 0.3);
  maybe('unknownField', () => randomValue(r, 0), 0.3);
  maybe('_id', () => 'from-the-document', 0.1);
  maybe('read', () => 'yes', 0.1);
  maybe('archived', () => r.chance(0.5), 0.3);
  maybe('subscriber', () => ({ _id: 'stored-copy', subscriberId: 'old', channels: [], topics: [], __v: 0, _organizationId: 'o', _environmentId: 'e', deleted: false, createdAt: 'c', updatedAt: 'u' }), 0.2);
  const entries = Object.entries(document);
  // Key order as stored varies; the response's order is the schema's.
  if (r.chance(0.5)) entries.reverse();
  const text = JSON.stringify(Object.fromEntries(entries));
  const columns: StoredMessage['columns'] = {
    _id: `msg${String(index).padStart(21, '0')}`,
    _environmentId: 'env0000000000000000000001',
    _organizationId: 'org0000000000000000000001',
    _notificationId: 'not0000000000000000000001',
    _subscriberId: subscriber._id,
    _jobId: r.pick([null, 'job1']),
    _templateId: r.pick([null, 'tmpl0000000000000000001']),
    transactionId: r.pick(['tx-1', 'tx "quoted"', 'é']),
    channel,
    read: r.chance(0.5),
    seen: r.chance(0.5),
    status: r.pick(['sent', 'error', 'warning'] as const),
    deleted: false,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: r.pick(['2026-01-01T00:00:00.000Z', '2026-01-05T10:00:00.000Z']),
  };
  if (channel === 'in_app') columns.archived = r.chance(0.3);
  return {
    columns,
    document: r.pick([text, text, text, '', null, JSON.stringify(JSON.parse(text), null, 1)]),
    ...(r.chance(0.9) ? { subscriber } : {}),
  };
}

describe('serializeMessagePage', () => {
  it('writes the bytes of the schema serializer over varied stored messages', () => {
    let written = 0;
    let refused = 0;
    let texts = 0;
    let others = 0;
    for (let seed = 1; seed <= 1000; seed++) {
      const r = randomSource(seed);
      const subscribers = [randomSubscriber(r, 'sub000000000000000000001'), randomSubscriber(r, 'sub000000000000000000002')];
      const page: Page<StoredMessage> = {
        data: Array.from({ length: Math.floor(r.next() * 12) }, (_, index) => randomStored(r, index, subscribers)),
        page: Math.floor(r.next() * 3),
        pageSize: 10,
        hasMore: r.chance(0.5),
        totalCount: Math.floor(r.next() * 100),
      };
      const fromTexts = listed(page, true);
      texts += fromTexts.data.filter((message) => message.text !== undefined).length;
      others += fromTexts.data.filter((message) => message.text === undefined).length;
      let expected: string;
      try {
        expected = reference(page);
      } catch {
        // A value the schema cannot write (a number for a nullable string): both refuse the page (a 500).
        expect(() => serializeMessagePage(listed(page, false)), `seed ${seed}`).toThrow();
        expect(() => serializeMessagePage(fromTexts), `seed ${seed}`).toThrow();
        refused++;
        continue;
      }
      expect(serializeMessagePage(listed(page, false)), `seed ${seed}`).toBe(expected);
      expect(serializeMessagePage(fromTexts), `seed ${seed} (list texts)`).toBe(expected);
      written++;
    }
    expect(written).toBeGreaterThan(500);
    expect(refused).toBeGreaterThan(0);
    // Most messages have a list text; the others (unreadable documents, stored subscriber copies, refused values) none.
    expect(texts).toBeGreaterThan(2000);
    expect(others).toBeGreaterThan(100);
  });

  it('puts the subscriber record where the list text marks it, and nothing without one', () => {
    const r = randomSource(11);
    const subscriber = randomSubscriber(r, 'sub000000000000000000001');
    const stored = { ...randomStored(r, 0, [subscriber]), document: JSON.stringify({ templateIdentifier: 'w', payload: { a: 1 } }) };
    const text = messageListText(stored)!;
    expect(text.split('\u0001')).toHaveLength(2);
    for (const withSubscriber of [true, false]) {
      const page = { data: [{ ...stored, ...(withSubscriber ? { subscriber } : { subscriber: undefined }) }], page: 0, pageSize: 10, hasMore: false, totalCount: 1 };
      expect(serializeMessagePage(listed(page, true))).toBe(reference(page));
    }
  });

  it('writes one subscriber record object once per page and reuses the text', () => {
    const r = randomSource(7);
    const subscriber = randomSubscriber(r, 'sub000000000000000000001');
    const page: Page<StoredMessage> = {
      data: Array.from({ length: 10 }, (_, index) => ({ ...randomStored(r, index, [subscriber]), subscriber })),
      page: 0,
      pageSize: 10,
      hasMore: false,
      totalCount: 10,
    };
    expect(serializeMessagePage(listed(page, false))).toBe(reference(page));
    expect(serializeMessagePage(listed(page, true))).toBe(reference(page));
  });

  it('matches JSON.stringify on every string the serializer escapes', () => {
    // The fast path keeps a stored JSON string as it is; fast-json-stringify must write the same text for it.
    const one = SerializerSelector()({}, undefined)({ schema: { type: 'object', properties: { s: { type: 'string' } } }, method: 'GET', url: '/', httpStatus: '200' } as never) as (value: unknown) => string;
    const samples = [...STRINGS];
    for (let code = 0; code < 0x10000; code += 1) samples.push(`a${String.fromCharCode(code)}b`, String.fromCharCode(code).repeat(50));
    for (const sample of samples) expect(one({ s: sample })).toBe(`{"s":${JSON.stringify(sample)}}`);
  });
});

describe('jsonFields', () => {
  it('splits compact JSON into its top-level values, and refuses anything else', () => {
    expect(jsonFields('{}')).toEqual(new Map());
    expect(jsonFields('{"a":1,"b":"x\\"}","c":{"d":[1,{"e":"]"}]},"d":null,"a":2}')).toEqual(
      new Map([['a', '2'], ['b', '"x\\"}"'], ['c', '{"d":[1,{"e":"]"}]}'], ['d', 'null']]),
    );
    expect(jsonFields('{"k\\"ey":true}')).toEqual(new Map([['k"ey', 'true']]));
    expect(jsonFields('{"a\\\\":"b\\\\"}')).toEqual(new Map([['a\\', '"b\\\\"']]));
    for (const text of ['', '[]', 'null', '{"a":1', '{"a" :1}', '{"a": 1}', '{"a":{"b": 1}}', '{"a":1} ', '{"a":"x}', '{a:1}', '{"a":1,}']) {
      expect(jsonFields(text), text).toBeUndefined();
    }
  });
});

describe('GET /v1/messages writes what the schema serializer wrote', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('byte for byte, for every filter of the list', async () => {
    const scope = await scopeOf(server.deps.store, server.devEnvironmentId);
    const ada = await insertSubscriber(server.deps.store, scope, { subscriberId: 'ada', firstName: 'Ada "A"', data: { plan: 'pro' } });
    const grace = await insertSubscriber(server.deps.store, scope, { subscriberId: 'grace' });
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
    const r = randomSource(99);
    for (let i = 0; i < 30; i++) {
      const partial: Partial<Message> = {
        channel: r.pick(['in_app', 'email', 'sms'] as const),
        createdAt: at(i),
        transactionId: r.pick(['tx-a', 'tx-b']),
        contextKeys: r.pick([[], ['tenant:acme']]),
        content: r.pick([r.pick(STRINGS), [{ type: 'text' as const, content: 'hi' }]]),
        payload: randomObject(r, 0),
        cta: r.pick([{}, { type: 'redirect' as const, data: { url: 'https://x' } }]),
        ...(r.chance(0.3) ? { subject: r.pick(STRINGS) } : {}),
      };
      await insertMessage(server.deps.store, r.chance(0.5) ? ada : grace, partial);
    }
    const queries = [
      'limit=10', 'limit=10&page=1', 'limit=7&page=3', 'subscriberId=ada&limit=10', 'subscriberId=grace&limit=5&page=1', 'channel=in_app',
      'channel=email&subscriberId=ada', 'transactionId=tx-a', 'transactionId=tx-a&transactionId=tx-b&limit=50', 'contextKeys=tenant:acme',
      'subscriberId=nobody', 'page=100',
    ];
    for (const query of queries) {
      const response = await fetch(`${server.url}/v1/messages?${query}`, { headers: { authorization: `ApiKey ${server.devKey}` } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const body = await response.text();
      // What the route wrote before: the store's Messages with their subscribers, through the schema serializer.
      const search = new URLSearchParams(query);
      const filter = {
        page: Number(search.get('page') ?? 0),
        limit: Number(search.get('limit') ?? 10),
        ...(search.get('channel') ? { channel: search.get('channel') as never } : {}),
        ...(search.get('subscriberId') ? { subscriberId: search.get('subscriberId')! } : {}),
        ...(search.getAll('transactionId').length ? { transactionIds: search.getAll('transactionId') } : {}),
        ...(search.get('contextKeys') ? { contextKeys: search.getAll('contextKeys') } : {}),
      };
      const page = await server.deps.store.messages.list(server.devEnvironmentId, filter);
      const subscribers = await server.deps.store.subscribers.getMany(server.devEnvironmentId, page.data.map((m) => m._subscriberId));
      for (const message of page.data) message.subscriber = subscribers.find((s) => s._id === message._subscriberId);
      expect(body, query).toBe(schemaSerializer(page));
    }
  });
});

describe('readJsonFields', () => {
  const slots = new Map([['a', 0], ['t', 1]]);
  const long = JSON.stringify({ steps: [{ name: 'x'.repeat(70), body: '},"a":1' }] });

  it('takes a long value met before without walking it, and gives what jsonFields gives', () => {
    const known: Array<string | undefined> = [];
    for (const text of [`{"t":${long},"a":1}`, `{"a":2,"t":${long}}`, `{"t":${long.slice(0, -1)},"z":2}}`, `{"t":"${'y'.repeat(80)}","a":[1]}`]) {
      const values: Array<string | undefined> = [];
      expect(readJsonFields(text, slots, values, known), text).toBe(true);
      const expected = jsonFields(text)!;
      expect(values, text).toEqual([expected.get('a'), expected.get('t')]);
    }
    expect(known[1]).toBe(`"${'y'.repeat(80)}"`);
  });

  it('refuses a text whose known value is followed by anything but a comma or the closing brace', () => {
    const known: Array<string | undefined> = [undefined, long];
    for (const text of [`{"t":${long}x}`, `{"t":${long} }`, `{"t":${long}`, `{"t":${long}]}`]) {
      expect(readJsonFields(text, slots, [], known), text).toBe(false);
      expect(jsonFields(text), text).toBeUndefined();
    }
  });
});
