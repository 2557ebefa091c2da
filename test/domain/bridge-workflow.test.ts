import { describe, expect, it } from 'vitest';
import { bridgeState, controlValuesFor, diffDiscovered, heraldStepType, nextCronAt, stepResultOutputs, workflowFromDiscovered } from '../../src/domain/bridge-workflow.js';

let counter = 0;
const ids = {
  newId: () => `id${String(++counter).padStart(22, '0')}`,
  environmentId: 'env',
  organizationId: 'org',
  notificationGroupId: 'group',
  now: '2026-11-25T12:00:00.000Z',
};

const discovered = {
  workflowId: 'welcome',
  tags: ['onboarding'],
  severity: 'high',
  preferences: { all: { readOnly: true }, channels: { email: { enabled: false } } },
  payload: { schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
  steps: [
    { stepId: 'hello', type: 'in_app', controls: { schema: { type: 'object', properties: { greeting: { type: 'string' } } } }, options: {} },
    { stepId: 'mail', type: 'email', options: { failOnErrorEnabled: true } },
    { stepId: 'ask', type: 'tool' },
  ],
};

describe('code-first workflows as stored', () => {
  it('maps a discovered workflow: origin external, defaults from its preferences, steps without control values', () => {
    const workflow = workflowFromDiscovered(discovered, undefined, ids);
    expect(workflow).toMatchObject({
      workflowId: 'welcome',
      name: 'welcome',
      origin: 'external',
      tags: ['onboarding'],
      severity: 'high',
      critical: true,
      readOnly: true,
      preferenceSettings: { in_app: true, email: false, sms: true, chat: true, push: true },
      payloadSchema: discovered.payload.schema,
    });
    expect(workflow.steps.map((step) => [step.stepId, step.type, step.shouldStopOnFail, step.controls])).toEqual([
      ['hello', 'in_app', false, {}],
      ['mail', 'email', true, {}],
      ['ask', 'custom', false, {}],
    ]);
    expect(workflow.steps[0].bridge?.controlSchema).toEqual(discovered.steps[0].controls!.schema);
    expect(workflow.steps[2].bridge?.type).toBe('tool');
    expect(heraldStepType('throttle')).toBe('throttle');
  });

  it('a re-sync keeps the workflow and step ids; the diff says what changes', () => {
    const first = workflowFromDiscovered(discovered, undefined, ids);
    const changed = { ...discovered, steps: [discovered.steps[0], { stepId: 'new', type: 'sms' }] };
    const second = workflowFromDiscovered(changed, first, ids);
    expect(second._id).toBe(first._id);
    expect(second.steps[0]._id).toBe(first.steps[0]._id);
    expect(second.steps[1]._id).not.toBe(first.steps[1]._id);
    const stale = { ...first, workflowId: 'old', _id: ids.newId() };
    expect(diffDiscovered([discovered, changed && { ...changed, workflowId: 'fresh' }], [first, stale], ids)).toEqual({
      created: ['fresh'],
      updated: [],
      unchanged: ['welcome'],
      deleted: ['old'],
    });
    expect(diffDiscovered([changed], [first], ids).updated).toEqual(['welcome']);
  });
});

describe('execution state for the framework', () => {
  it("gives each earlier step the outputs its type's result schema accepts", () => {
    expect(stepResultOutputs({ stepId: 'a', type: 'in_app', status: 'skipped' })).toEqual({ seen: false, read: false, lastSeenDate: null, lastReadDate: null });
    expect(stepResultOutputs({ stepId: 'a', type: 'in_app', status: 'completed', inApp: { seen: true, read: false, lastSeenDate: '2026-01-01T00:00:00.000Z' } })).toEqual({
      seen: true,
      read: false,
      lastSeenDate: '2026-01-01T00:00:00.000Z',
      lastReadDate: null,
    });
    for (const type of ['email', 'sms', 'chat', 'push']) expect(stepResultOutputs({ stepId: 'a', type, status: 'completed' })).toEqual({});
    expect(stepResultOutputs({ stepId: 'a', type: 'delay', status: 'completed', durationMs: 2000 })).toEqual({ duration: 2000 });
    const events = [{ id: 'e-0', time: '2026-01-01T00:00:00.000Z', payload: { item: 'mug' } }];
    expect(stepResultOutputs({ stepId: 'a', type: 'digest', status: 'completed', digestEvents: events })).toEqual({ events, eventCount: 1 });
    expect(stepResultOutputs({ stepId: 'a', type: 'custom', status: 'completed', outputs: { tier: 'gold' } })).toEqual({ tier: 'gold' });
    expect(bridgeState([{ stepId: 'a', type: 'email', status: 'failed', error: 'boom' }])).toEqual([{ stepId: 'a', outputs: {}, state: { status: 'failed', error: 'boom' } }]);
  });

  it("puts a trigger's control values over the stored ones", () => {
    expect(controlValuesFor('hello', { greeting: 'Hi', x: 1 }, { steps: { hello: { greeting: 'Yo' } } })).toEqual({ greeting: 'Yo', x: 1 });
    expect(controlValuesFor('hello', undefined, undefined)).toEqual({});
    expect(controlValuesFor('hello', { a: 1 }, { steps: { other: { a: 2 } } })).toEqual({ a: 1 });
  });
});

describe('timed delays from code', () => {
  it('wait until the next match of the cron expression, in UTC', () => {
    expect(nextCronAt('0 9 * * *', Date.parse('2026-11-25T08:00:00.000Z'))).toBe(Date.parse('2026-11-25T09:00:00.000Z'));
    expect(nextCronAt('not a cron', 0)).toBeUndefined();
  });
});
