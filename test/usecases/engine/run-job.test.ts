import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/test-server.js';
import { createWorkflow, messagesOf, trigger } from '../../worker/engine-helpers.js';

/**
 * The first step run in the trigger's own job gets the subscriber the trigger just read, instead of reading it again;
 * a subscriber the trigger created or changed is still read back, so templates see it exactly as stored.
 */
describe('runJob: the subscriber of a first step run with the trigger', () => {
  let server: TestServer;
  let reads = 0;

  beforeAll(async () => {
    server = await startTestServer({ worker: true });
    await createWorkflow(server, { workflowId: 'greet', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Hi {{ subscriber.firstName }}, {{ subscriber.lastName | default: "no last name" }}' } }] });
    const subscribers = server.deps.store.subscribers;
    const get = subscribers.get.bind(subscribers);
    subscribers.get = async (...args) => {
      reads += 1;
      return get(...args);
    };
  });
  afterAll(async () => {
    await server?.close();
  });

  async function greet(to: unknown, transactionId: string): Promise<string> {
    reads = 0;
    expect((await trigger(server, { name: 'greet', to, transactionId })).status).toBe(201);
    await server.waitForIdle();
    const [message] = await messagesOf(server, transactionId);
    return message.content;
  }

  it('uses the record the trigger read for a known subscriber', async () => {
    expect((await server.request('POST', '/v2/subscribers', { body: { subscriberId: 'ada', firstName: 'Ada' } })).status).toBe(201);
    expect(await greet('ada', 'greet-known')).toBe('Hi Ada, no last name');
    expect(reads).toBe(0);
  });

  it('uses the record the store returned for a subscriber the trigger created', async () => {
    expect(await greet({ subscriberId: 'bo', firstName: 'Bo' }, 'greet-created')).toBe('Hi Bo, no last name');
    expect(reads).toBe(0);
  });

  it('reads back a subscriber the trigger changed', async () => {
    expect(await greet({ subscriberId: 'ada', lastName: 'Lovelace' }, 'greet-changed')).toBe('Hi Ada, Lovelace');
    expect(reads).toBeGreaterThan(0);
  });
});
