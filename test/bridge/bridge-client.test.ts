import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBridgeClient } from '../../src/bridge/client.js';
import { BridgeError } from '../../src/bridge/ports.js';
import { createProviderContext } from '../../src/providers/outbound.js';
import { startHttpFake, type HttpFake } from '../fakes/http-fake.js';
import { testProviderContext } from '../fakes/provider-context.js';
import { freePort } from '../helpers/herald-process.js';

/** The bridge client against a local fake: the exact signed request, and how each failure is classified. */
let fake: HttpFake;
// A generous timeout: the machine running the suite may be busy; the timeout case uses its own short one.
const client = createBridgeClient({ fetch: testProviderContext(5000).fetch, now: () => 1_700_000_000_000 });
const target = () => ({ url: `${fake.url}/api/novu`, secretKey: 'sk_test_key' });

beforeAll(async () => {
  fake = await startHttpFake();
});
afterAll(async () => {
  await fake.close();
});

async function failure(promise: Promise<unknown>): Promise<BridgeError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(BridgeError);
  return error as BridgeError;
}

describe('bridge client', () => {
  it('signs the exact compact JSON it sends, in both signature headers; GETs sign {}', async () => {
    fake.setHandler(() => ({ body: { outputs: { body: 'hi' }, providers: {}, options: { skip: false } } }));
    const body = { payload: { name: 'Ada', nested: { a: [1, 2] } }, controls: {}, state: [], subscriber: { subscriberId: 's' }, context: {}, env: {} };
    const { result, call } = await client.execute(target(), { action: 'execute', workflowId: 'wf', stepId: 'st', body });
    expect(result).toEqual({ outputs: { body: 'hi' }, providers: {}, options: { skip: false } });
    expect(call).toMatchObject({ method: 'POST', action: 'execute', status: 200 });
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/api/novu?action=execute&workflowId=wf&stepId=st');
    expect(sent.body).toBe(JSON.stringify(body));
    const expected = createHmac('sha256', 'sk_test_key').update(`1700000000000.${sent.body}`).digest('hex');
    expect(sent.headers['novu-signature']).toBe(`t=1700000000000,v1=${expected}`);
    expect(sent.headers['x-novu-signature']).toBe(sent.headers['novu-signature']);

    fake.setHandler(() => ({ body: { workflows: [], agents: [] } }));
    await client.discover(target());
    const get = fake.requests.at(-1)!;
    expect(get.method).toBe('GET');
    expect(get.path).toBe('/api/novu?action=discover');
    const forEmpty = createHmac('sha256', 'sk_test_key').update('1700000000000.{}').digest('hex');
    expect(get.headers['novu-signature']).toBe(`t=1700000000000,v1=${forEmpty}`);
  });

  it("a 4xx is final with the framework's code and message; 5xx, 429 and 408 are retryable", async () => {
    fake.setHandler(() => ({ status: 400, body: { message: 'Workflow payload is invalid', code: 'ExecutionEventPayloadInvalidError', data: [{ path: '/name' }] } }));
    const refused = await failure(client.execute(target(), { action: 'execute', workflowId: 'wf', stepId: 'st', body: {} as never }));
    expect(refused.retryable).toBe(false);
    expect(refused.code).toBe('ExecutionEventPayloadInvalidError');
    expect(refused.message).toBe('Bridge answered 400 ExecutionEventPayloadInvalidError: Workflow payload is invalid');
    expect(JSON.parse(refused.raw!).error.answer.data).toEqual([{ path: '/name' }]);
    for (const status of [500, 502, 503, 429, 408]) {
      fake.setHandler(() => ({ status, body: { message: 'busy', code: 'BridgeError' } }));
      expect((await failure(client.healthCheck(target()))).retryable, String(status)).toBe(true);
    }
    fake.setHandler(() => ({ status: 401, body: { message: 'Signature does not match', code: 'SignatureMismatchError' } }));
    const unsigned = await failure(client.discover(target()));
    expect(unsigned.retryable).toBe(false);
    expect(unsigned.code).toBe('SignatureMismatchError');
  });

  it('refuses an answer that is not a bridge: HTML, or JSON without workflows', async () => {
    fake.setHandler(() => ({ status: 200, headers: { 'content-type': 'text/html' }, body: '<html></html>' }));
    expect((await failure(client.discover(target()))).message).toContain('not a JSON object');
    fake.setHandler(() => ({ body: { hello: 'world' } }));
    expect((await failure(client.discover(target()))).message).toContain('without a workflows list');
    fake.setHandler(() => ({ body: { workflows: [{ workflowId: 'x', steps: [{ type: 'email' }] }] } }));
    expect((await failure(client.discover(target()))).message).toContain('step without stepId or type');
  });

  it('connection errors and timeouts are retryable; a guarded address is not', async () => {
    const closed = await freePort();
    const down = await failure(client.discover({ url: `http://127.0.0.1:${closed}/api/novu`, secretKey: 'k' }));
    expect(down.retryable).toBe(true);
    expect(down.message).toContain('could not be reached');
    fake.setHandler(() => 'hang');
    const impatient = createBridgeClient({ fetch: testProviderContext(500).fetch });
    const slow = await failure(impatient.execute(target(), { action: 'execute', workflowId: 'wf', stepId: 'st', body: {} as never }));
    expect(slow.retryable).toBe(true);
    expect(slow.message).toContain('timed out after 500 ms');
    const guarded = createBridgeClient({ fetch: createProviderContext({ timeoutMs: 500, userAgent: 't', allow: [] }).fetch });
    const refused = await failure(guarded.discover({ url: `${fake.url}/api/novu`, secretKey: 'k' }));
    expect(refused.retryable).toBe(false);
    expect(refused.message).toContain('refused: loopback address');
  });
});
