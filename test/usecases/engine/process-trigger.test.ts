import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TriggerRecord } from '../../../src/store/ports.js';
import type { LoadedRecords } from '../../../src/usecases/engine/step-context.js';
import { eventIdFor, processTrigger } from '../../../src/usecases/engine/process-trigger.js';
import { insertNotificationEvent, insertSubscriber, scopeOf, type Scope } from '../../helpers/factories.js';
import { startTestServer, type TestServer } from '../../helpers/test-server.js';
import { createWorkflow, eventsOf } from '../../worker/engine-helpers.js';

const SECONDS = '6a1b2c3d';
const PROCESS_BYTES = '0a0b0c0d0e';

/** A trigger id as `newId` lays it out: seconds, a 3-byte counter, the process bytes. */
function triggerId(counter: number): string {
  return SECONDS + counter.toString(16).padStart(6, '0') + PROCESS_BYTES;
}

function triggerOf(id: string): Pick<TriggerRecord, '_id' | 'createdAt'> {
  return { _id: id, createdAt: new Date(parseInt(SECONDS, 16) * 1000).toISOString() };
}

describe('eventIdFor', () => {
  it('is a record id that starts with the trigger id’s seconds and counter, the same on every call', () => {
    const trigger = triggerOf(triggerId(0x00a1b2));
    const id = eventIdFor(trigger, 'subscriber-1');
    expect(id).toMatch(/^[0-9a-f]{24}$/);
    expect(id.slice(0, 14)).toBe(trigger._id.slice(0, 14));
    expect(eventIdFor(trigger, 'subscriber-1')).toBe(id);
    expect(eventIdFor(trigger, 'subscriber-2')).not.toBe(id);
  });

  it('sorts the events of successive triggers in the order the triggers were made, whatever the subscriber', () => {
    const ids = Array.from({ length: 200 }, (_, index) => eventIdFor(triggerOf(triggerId(0x001000 + index)), `subscriber-${199 - index}`));
    expect([...ids].sort()).toEqual(ids);
  });

  it('gives each probe another id with the same prefix', () => {
    const trigger = triggerOf(triggerId(7));
    const probes = [0, 1, 2, 3].map((probe) => eventIdFor(trigger, 'subscriber-1', probe));
    expect(new Set(probes).size).toBe(4);
    for (const probe of probes) expect(probe.slice(0, 14)).toBe(trigger._id.slice(0, 14));
  });
});

/** The event id of versions before the ordered layout: the trigger's seconds, then 16 hex of the hash. */
function formerEventId(trigger: Pick<TriggerRecord, '_id' | 'createdAt'>, subscriberInternalId: string): string {
  const seconds = Math.floor(Date.parse(trigger.createdAt) / 1000).toString(16).padStart(8, '0');
  return seconds + createHash('sha256').update(`${trigger._id}:${subscriberInternalId}`).digest('hex').slice(0, 16);
}

// Both ways a trigger is processed: its first step queued, and (the worker's) its first step run with the event's write
// (Store.batch), where PostgreSQL writes the event without looking its id up first and looks it up only when that write
// fails on a taken id (session 18).
describe.each([
  { way: 'first step queued', counterStart: 0x000100, runFirstStep: undefined },
  { way: 'first step run with the write', counterStart: 0x000500, runFirstStep: async () => false },
])('processTrigger: where an event is placed ($way)', ({ counterStart, runFirstStep }) => {
  let server: TestServer;
  let scope: Scope;
  let counter = counterStart;
  const process = (trigger: TriggerRecord) => processTrigger(server.deps, { environmentId: trigger.environmentId, triggerId: trigger._id }, { runFirstStep });

  beforeAll(async () => {
    server = await startTestServer();
    scope = await scopeOf(server.deps.store, server.devEnvironmentId);
    await createWorkflow(server, { workflowId: 'placement', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Hello' } }] });
  });
  afterAll(async () => {
    await server?.close();
  });

  async function acceptedTrigger(to: string, transactionId: string): Promise<TriggerRecord> {
    const now = new Date().toISOString();
    const record: TriggerRecord = {
      _id: triggerId(counter++),
      environmentId: scope.environmentId,
      organizationId: scope.organizationId,
      transactionId,
      workflowId: 'placement',
      request: { name: 'placement', to, payload: {} },
      state: 'accepted',
      createdAt: now,
      updatedAt: now,
    };
    expect((await server.deps.store.triggers.create(record)).created).toBe(true);
    return record;
  }

  async function processAgain(trigger: TriggerRecord): Promise<void> {
    await server.deps.store.triggers.setState(trigger.environmentId, trigger._id, 'accepted');
    await process(trigger);
  }

  it('moves on to the next probe when another subscriber holds the id, and a rerun finds the event it made', async () => {
    const alice = await insertSubscriber(server.deps.store, scope);
    const bob = await insertSubscriber(server.deps.store, scope);
    const trigger = await acceptedTrigger(alice.subscriberId, 'placement-probe');
    await insertNotificationEvent(server.deps.store, bob, { _id: eventIdFor(trigger, alice._id), transactionId: 'placement-other' });

    await process(trigger);
    const events = await eventsOf(server, 'placement-probe');
    expect(events.map((event) => [event._id, event._subscriberId])).toEqual([[eventIdFor(trigger, alice._id, 1), alice._id]]);

    await processAgain(trigger);
    expect((await eventsOf(server, 'placement-probe')).map((event) => event._id)).toEqual([eventIdFor(trigger, alice._id, 1)]);
    expect(await eventsOf(server, 'placement-other')).toHaveLength(1);
  });

  it('finds an event that an earlier version made under the former id layout instead of making a second one', async () => {
    const carol = await insertSubscriber(server.deps.store, scope);
    const trigger = await acceptedTrigger(carol.subscriberId, 'placement-former');
    await insertNotificationEvent(server.deps.store, carol, { _id: formerEventId(trigger, carol._id), transactionId: 'placement-former' });

    await process(trigger);
    expect((await eventsOf(server, 'placement-former')).map((event) => event._id)).toEqual([formerEventId(trigger, carol._id)]);
  });

  it('makes one event on a rerun after its event was written, and a new one otherwise', async () => {
    const dave = await insertSubscriber(server.deps.store, scope);
    const trigger = await acceptedTrigger(dave.subscriberId, 'placement-rerun');
    await process(trigger);
    expect((await eventsOf(server, 'placement-rerun')).map((event) => event._id)).toEqual([eventIdFor(trigger, dave._id)]);
    await processAgain(trigger);
    await processAgain(trigger);
    const events = await eventsOf(server, 'placement-rerun');
    expect(events.map((event) => event._id)).toEqual([eventIdFor(trigger, dave._id)]);
    expect(events[0]!.jobs).toHaveLength(1);
  });
});

describe('processTrigger: the subscriber handed to the first step', () => {
  let server: TestServer;
  let scope: Scope;
  let counter = 0x000900;

  beforeAll(async () => {
    server = await startTestServer();
    scope = await scopeOf(server.deps.store, server.devEnvironmentId);
    await createWorkflow(server, { workflowId: 'handoff', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Hello' } }] });
  });
  afterAll(async () => {
    await server?.close();
  });

  /** Processes a trigger to `to` and returns what the first step was handed (the step itself is not run). */
  async function loadedFor(to: unknown): Promise<LoadedRecords> {
    const now = new Date().toISOString();
    const record: TriggerRecord = {
      _id: triggerId(counter++),
      environmentId: scope.environmentId,
      organizationId: scope.organizationId,
      transactionId: `handoff-${counter}`,
      workflowId: 'handoff',
      request: { name: 'handoff', to, payload: {} } as TriggerRecord['request'],
      state: 'accepted',
      createdAt: now,
      updatedAt: now,
    };
    await server.deps.store.triggers.create(record);
    let handed: LoadedRecords | undefined;
    await processTrigger(server.deps, { environmentId: record.environmentId, triggerId: record._id }, {
      runFirstStep: async (_followUp, loaded) => {
        handed = loaded;
        return false;
      },
    });
    expect(handed).toBeDefined();
    return handed!;
  }

  it('is the record just read for a known subscriber whose profile the trigger leaves as it is', async () => {
    const dora = await insertSubscriber(server.deps.store, scope, { firstName: 'Dora' });
    const stored = await server.deps.store.subscribers.get(scope.environmentId, dora._id);
    expect((await loadedFor(dora.subscriberId)).subscriber).toEqual(stored);
    expect((await loadedFor({ subscriberId: dora.subscriberId, firstName: 'Dora' })).subscriber).toEqual(stored);
  });

  it('is the record as the store reads it back when the trigger created it', async () => {
    for (const to of ['handoff-new', { subscriberId: 'handoff-new-profile', firstName: 'Fay', data: { plan: 'pro', n: 1 } }]) {
      const handed = (await loadedFor(to)).subscriber;
      const subscriberId = typeof to === 'string' ? to : to.subscriberId;
      // Byte for byte: the step renders and stores from it as it would from a read.
      expect(JSON.stringify(handed)).toBe(JSON.stringify(await server.deps.store.subscribers.findBySubscriberId(scope.environmentId, subscriberId)));
    }
  });

  it('is left out (the step reads the subscriber) when the trigger changed its profile', async () => {
    const erin = await insertSubscriber(server.deps.store, scope, { firstName: 'Erin' });
    expect((await loadedFor({ subscriberId: erin.subscriberId, firstName: 'Erinn' })).subscriber).toBeUndefined();
  });
});
