import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQueryString } from '../../src/http/query-string.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Array query parameters in every encoding Novu clients send (repeated keys, `a[]=` from axios-based SDKs, `a[0]=`
 * from qs' indices format, and a single value), on every route that has one: each encoding must filter exactly as
 * the repeated form does, and the filtered set must be the expected one.
 */
describe('parseQueryString', () => {
  it('folds bracketed and indexed keys into the plain name and keeps single values single', () => {
    expect(parseQueryString('a=1&a=2&b=x')).toEqual({ a: ['1', '2'], b: 'x' });
    expect(parseQueryString('a[]=1&a[]=2')).toEqual({ a: ['1', '2'] });
    expect(parseQueryString('a[]=1')).toEqual({ a: ['1'] });
    expect(parseQueryString('a[1]=second&a[0]=first')).toEqual({ a: ['first', 'second'] });
    expect(parseQueryString('a%5B%5D=1&a%5B%5D=2')).toEqual({ a: ['1', '2'] });
    expect(parseQueryString('a=1&a[]=2')).toEqual({ a: ['1', '2'] });
    expect(parseQueryString('q=a%26b&e=x%2By%40z.io&s=a+b')).toEqual({ q: 'a&b', e: 'x+y@z.io', s: 'a b' });
    expect(parseQueryString('weird[x]=1&[]=2')).toEqual({ 'weird[x]': '1', '[]': '2' });
    expect(parseQueryString('')).toEqual({});
  });

  it('reads a query with nothing to decode as URLSearchParams reads it (its path without URLSearchParams)', () => {
    const viaUrlSearchParams = (query: string) => {
      const parsed: Record<string, string | string[]> = {};
      for (const [key, value] of new URLSearchParams(query)) {
        const current = parsed[key];
        parsed[key] = current === undefined ? value : [current, value].flat();
      }
      return parsed;
    };
    const queries = ['subscriberId=list-1&limit=10&page=0', 'a', 'a=', '=x', 'a=1&&b=2&', '&a=1=2', 'a=1&a=2&a=3', 'é=ü&x=y;z', '?a=1', 'a=%zz', 'a=b+c'];
    for (const query of queries) expect({ ...parseQueryString(query) }, query).toEqual(viaUrlSearchParams(query));
  });
});

type Encoding = (name: string, values: string[]) => string;
const ENCODINGS: Record<string, Encoding> = {
  repeated: (name, values) => values.map((v) => `${name}=${encodeURIComponent(v)}`).join('&'),
  brackets: (name, values) => values.map((v) => `${name}[]=${encodeURIComponent(v)}`).join('&'),
  'encoded brackets': (name, values) => values.map((v) => `${name}%5B%5D=${encodeURIComponent(v)}`).join('&'),
  indices: (name, values) => values.map((v, i) => `${name}[${i}]=${encodeURIComponent(v)}`).join('&'),
};

describe('array query parameters on real routes', () => {
  let server: TestServer;
  const tx = (n: number) => `qa-tx-${n}`;
  let workflowIds: { low: string; high: string };

  beforeAll(async () => {
    server = await startTestServer({ worker: true });
    await server.request('POST', '/v1/integrations', { body: { providerId: 'novu', channel: 'in_app', active: true } });
    const low = await server.request('POST', '/v2/workflows', {
      body: { workflowId: 'qa-low', name: 'QA low', active: true, severity: 'low', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'low' } }] },
    });
    const high = await server.request('POST', '/v2/workflows', {
      body: { workflowId: 'qa-high', name: 'QA high', active: true, severity: 'high', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'high' } }] },
    });
    workflowIds = { low: low.body.data._id, high: high.body.data._id };
    for (const n of [0, 1, 2]) {
      await server.request('POST', '/v2/subscribers', { body: { subscriberId: `qa-sub-${n}`, email: `qa${n}@example.com` } });
    }
    const triggers = [
      { name: 'qa-low', to: 'qa-sub-0', transactionId: tx(0), context: { tenant: 'acme' } },
      { name: 'qa-high', to: 'qa-sub-1', transactionId: tx(1), context: { tenant: 'acme', team: 'red' } },
      { name: 'qa-low', to: 'qa-sub-2', transactionId: tx(2) },
      { name: 'qa-high', to: 'qa-sub-0', transactionId: tx(3), context: { tenant: 'globex' } },
    ];
    for (const trigger of triggers) expect((await server.request('POST', '/v1/events/trigger', { body: { payload: {}, ...trigger } })).status).toBe(201);
    await server.waitForIdle();
    for (const deadline = Date.now() + 10_000; (await server.request('GET', '/v1/messages?limit=100')).body.totalCount < 4; ) {
      if (Date.now() > deadline) throw new Error('messages did not arrive');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  });
  afterAll(async () => server?.close());

  /** The transactionIds a list answers (every route here lists records carrying one). */
  async function transactionsOf(path: string, query: string): Promise<string[]> {
    const response = await server.request('GET', `${path}?limit=50&${query}`);
    expect(response.status, `${path}?${query}: ${response.text}`).toBe(200);
    return response.body.data.map((record: { transactionId: string }) => record.transactionId).sort();
  }

  const cases: Array<{ path: string; name: string; values: () => string[]; single: () => string; expected: number[]; expectedSingle: number[] }> = [
    { path: '/v1/messages', name: 'transactionId', values: () => [tx(0), tx(2)], single: () => tx(1), expected: [0, 2], expectedSingle: [1] },
    { path: '/v1/messages', name: 'contextKeys', values: () => ['team:red', 'tenant:acme'], single: () => 'tenant:acme', expected: [1], expectedSingle: [0] },
    { path: '/v1/notifications', name: 'channels', values: () => ['in_app', 'email'], single: () => 'sms', expected: [0, 1, 2, 3], expectedSingle: [] },
    { path: '/v1/notifications', name: 'templates', values: () => [workflowIds.high], single: () => workflowIds.low, expected: [1, 3], expectedSingle: [0, 2] },
    { path: '/v1/notifications', name: 'emails', values: () => ['qa0@example.com', 'qa2@example.com'], single: () => 'qa1@example.com', expected: [0, 2, 3], expectedSingle: [1] },
    { path: '/v1/notifications', name: 'subscriberIds', values: () => ['qa-sub-1', 'qa-sub-2'], single: () => 'qa-sub-0', expected: [1, 2], expectedSingle: [0, 3] },
    { path: '/v1/notifications', name: 'severity', values: () => ['high', 'medium'], single: () => 'low', expected: [1, 3], expectedSingle: [0, 2] },
    { path: '/v1/notifications', name: 'contextKeys', values: () => ['tenant:acme', 'team:red'], single: () => 'tenant:globex', expected: [1], expectedSingle: [3] },
    { path: '/v2/subscribers/qa-sub-0/notifications', name: 'severity', values: () => ['high', 'medium'], single: () => 'low', expected: [3], expectedSingle: [0] },
    { path: '/v2/subscribers/qa-sub-1/notifications', name: 'contextKeys', values: () => ['team:red', 'tenant:acme'], single: () => 'team:red', expected: [1], expectedSingle: [] },
  ];

  for (const c of cases) {
    it(`${c.path} ${c.name}: repeated, [] , %5B%5D, [i] and single values filter alike`, async () => {
      const expected = c.expected.map(tx).sort();
      for (const [encoding, encode] of Object.entries(ENCODINGS)) {
        expect(await transactionsOf(c.path, encode(c.name, c.values())), encoding).toEqual(expected);
        expect(await transactionsOf(c.path, encode(c.name, [c.single()])), `${encoding} (one value)`).toEqual(c.expectedSingle.map(tx).sort());
      }
      expect(await transactionsOf(c.path, `${c.name}=${encodeURIComponent(c.single())}`), 'plain single').toEqual(c.expectedSingle.map(tx).sort());
    });
  }

  it('a bad value in bracket form is a 400 naming the parameter', async () => {
    const channels = await server.request('GET', '/v1/notifications?channels[]=in_app&channels[]=carrier-pigeon');
    expect(channels.status).toBe(400);
    expect(channels.body.message.join(' ')).toMatch(/channels/);
    const severity = await server.request('GET', '/v1/notifications?severity[0]=urgent');
    expect(severity.status).toBe(400);
    expect(severity.body.message.join(' ')).toMatch(/severity/);
  });
});
