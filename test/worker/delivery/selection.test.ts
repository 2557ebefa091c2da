import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFake, type HttpFake } from '../../fakes/http-fake.js';
import { startTestServer, type TestServer } from '../../helpers/test-server.js';
import { createWorkflow } from '../engine-helpers.js';
import { createIntegration, createSubscriber, deliveryEnv, outcomeDetails, triggerAndSettle } from './delivery-helpers.js';

/**
 * Which SMS integration a step uses. Four generic-sms integrations post to one fake under different paths,
 * so the path the fake saw names the integration that was chosen.
 */
let server: TestServer;
let fake: HttpFake;

const condition = (on: 'payload' | 'subscriber', field: string, value: string) => [
  { isNegated: false, type: 'STATEMENT', value: 'AND', children: [{ on, field, operator: 'EQUAL', value }] },
];

beforeAll(async () => {
  fake = await startHttpFake(() => ({ body: { id: 'sms-1' } }));
  server = await startTestServer({ worker: true, env: deliveryEnv() });
  await createWorkflow(server, { workflowId: 'ping', steps: [{ name: 'ping', type: 'sms', controlValues: { body: 'Ping {{ payload.n }}' } }] });
  await createSubscriber(server, { subscriberId: 'ann-sel', firstName: 'Ann', phone: '+15550000001' });
  await createSubscriber(server, { subscriberId: 'vic-sel', firstName: 'Vic', phone: '+15550000002' });
  const sms = (name: string, extra: Record<string, unknown> = {}) =>
    createIntegration(server, {
      providerId: 'generic-sms',
      identifier: `sms-${name}`,
      credentials: { baseUrl: `${fake.url}/${name}`, apiKey: 'k', from: 'HERALD' },
      ...extra,
    });
  const a = await sms('a');
  const b = await sms('b');
  const c = await sms('c', { conditions: condition('payload', 'region', 'eu') });
  const d = await sms('d', { conditions: condition('subscriber', 'firstName', 'Vic') });
  // A is the channel's first active integration, hence primary; the others rank by creation (priority 2, 3, 4).
  expect([a.primary, b.primary, c.primary, d.primary]).toEqual([true, false, false, false]);
  await createIntegration(server, { providerId: 'generic-sms', identifier: 'sms-off', active: false, credentials: { baseUrl: `${fake.url}/off`, apiKey: 'k', from: 'H' } });
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
});

async function chosenPath(body: Record<string, unknown>): Promise<string | undefined> {
  const before = fake.requests.length;
  const delivery = await triggerAndSettle(server, { name: 'ping', ...body });
  const sent = fake.requests.slice(before);
  expect(sent.length).toBeLessThanOrEqual(1);
  if (sent.length === 1) {
    expect(delivery.messages).toHaveLength(1);
    expect(delivery.messages[0]).toMatchObject({ status: 'sent', providerId: 'generic-sms', content: `Ping ${(body.payload as any)?.n ?? ''}` });
  }
  return sent[0]?.path;
}

describe('integration selection', () => {
  it('primary first: the primary wins over a higher-priority integration when no condition matches', async () => {
    expect(await chosenPath({ to: 'ann-sel', payload: { n: 1 } })).toBe('/a');
  });

  it('conditions: an integration whose conditions match (payload or subscriber) is chosen over unconditional ones', async () => {
    expect(await chosenPath({ to: 'ann-sel', payload: { n: 2, region: 'eu' } })).toBe('/c');
    expect(await chosenPath({ to: 'vic-sel', payload: { n: 3, region: 'us' } })).toBe('/d');
  });

  it('then priority: among several matching integrations without the primary, the highest priority wins', async () => {
    expect(await chosenPath({ to: 'vic-sel', payload: { n: 4, region: 'eu' } })).toBe('/d');
  });

  it('a primary whose conditions do not match is passed over', async () => {
    const list = await server.request('GET', '/v1/integrations');
    const primary = list.body.data.find((integration: any) => integration.identifier === 'sms-a');
    const off = await server.request('PUT', `/v1/integrations/${primary._id}`, { body: { active: false } });
    expect(off.status, off.text).toBe(200);
    try {
      // Switching A off hands primary to the highest-priority active integration: D, which only Vic matches.
      const after = await server.request('GET', '/v1/integrations');
      expect(after.body.data.find((integration: any) => integration.primary && integration.channel === 'sms').identifier).toBe('sms-d');
      expect(await chosenPath({ to: 'ann-sel', payload: { n: 5 } })).toBe('/b');
      expect(await chosenPath({ to: 'vic-sel', payload: { n: 5 } })).toBe('/d');
    } finally {
      expect((await server.request('PUT', `/v1/integrations/${primary._id}`, { body: { active: true, check: false } })).status).toBe(200);
    }
  });

  it('overrides.integrationIdentifier (top level or per channel) names the integration, conditions aside', async () => {
    expect(await chosenPath({ to: 'ann-sel', payload: { n: 6, region: 'eu' }, overrides: { integrationIdentifier: 'sms-b' } })).toBe('/b');
    expect(await chosenPath({ to: 'ann-sel', payload: { n: 7 }, overrides: { sms: { integrationIdentifier: 'sms-d' }, integrationIdentifier: 'sms-b' } })).toBe('/d');
  });

  it('a named integration that is unknown or inactive sends nothing and says why', async () => {
    for (const identifier of ['sms-missing', 'sms-off']) {
      const before = fake.requests.length;
      const delivery = await triggerAndSettle(server, { name: 'ping', to: 'ann-sel', payload: { n: 8 }, overrides: { integrationIdentifier: identifier } });
      expect(fake.requests.length).toBe(before);
      expect(delivery.messages).toHaveLength(0);
      expect(delivery.job.status).toBe('skipped');
      expect(outcomeDetails(delivery.job)).toEqual([
        expect.objectContaining({ status: 'Warning', detail: `integration "${identifier}" named in the trigger's overrides is not an active sms integration` }),
      ]);
    }
  });
});
