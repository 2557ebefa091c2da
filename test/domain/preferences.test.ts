import { describe, expect, it } from 'vitest';
import {
  decideChannel,
  effectiveGlobalChannels,
  withChannels,
  withoutGlobalChannels,
  workflowDefaultsOf,
  type GlobalPreference,
  type WorkflowPreference,
} from '../../src/domain/preferences.js';

type Setting = boolean | undefined;
const label = (value: Setting) => (value === undefined ? 'unset' : value ? 'on' : 'off');

describe('decideChannel: the whole matrix', () => {
  const cases: Array<[boolean, Setting, Setting, boolean, boolean]> = [];
  for (const defaultOn of [true, false])
    for (const global of [true, false, undefined] as Setting[])
      for (const workflow of [true, false, undefined] as Setting[])
        for (const readOnly of [false, true])
          for (const critical of [false, true]) cases.push([defaultOn, global, workflow, readOnly, critical]);

  it('covers 2 × 3 × 3 × 2 × 2 = 72 cases', () => expect(cases).toHaveLength(72));

  it.each(cases)('default %s, global %s, workflow %s, readOnly %s, critical %s', (defaultOn, global, workflow, readOnly, critical) => {
    const defaults = { channels: { email: defaultOn }, readOnly, critical };
    const globalRecord: GlobalPreference | undefined = global === undefined ? undefined : { channels: { email: global } };
    const workflowRecord: WorkflowPreference | undefined = workflow === undefined ? undefined : { channels: { email: workflow } };
    const decision = decideChannel('email', defaults, globalRecord, workflowRecord);

    // Expected, spelled out case by case: critical always sends; read-only follows its default; otherwise the
    // highest level that says something wins (workflow record > global record > workflow default).
    let expected: { enabled: boolean; level: string };
    if (critical) expected = { enabled: true, level: 'critical' };
    else if (readOnly) expected = { enabled: defaultOn, level: 'workflow_default' };
    else if (workflow !== undefined) expected = { enabled: workflow, level: 'subscriber_workflow' };
    else if (global !== undefined) expected = { enabled: global, level: 'subscriber_global' };
    else expected = { enabled: defaultOn, level: 'workflow_default' };
    expect(decision, `${label(defaultOn)}/${label(global)}/${label(workflow)}`).toEqual(expected);
  });
});

describe('decideChannel: levels and channels', () => {
  const open = { channels: {}, readOnly: false, critical: false };

  it('a channel a workflow does not list is on', () => {
    expect(decideChannel('sms', open, undefined, undefined)).toEqual({ enabled: true, level: 'workflow_default' });
  });

  it('a record only decides the channels it names', () => {
    expect(decideChannel('sms', open, { channels: { email: false } }, { channels: { push: false } })).toEqual({ enabled: true, level: 'workflow_default' });
  });

  it('the subscriber can turn on a channel the workflow has off by default', () => {
    const defaults = { channels: { email: false }, readOnly: false, critical: false };
    expect(decideChannel('email', defaults, { channels: { email: true } }, undefined)).toEqual({ enabled: true, level: 'subscriber_global' });
  });

  it('enabled: false switches every channel off at its level; a workflow channel value above it still wins', () => {
    expect(decideChannel('chat', open, { enabled: false, channels: { chat: true } }, undefined)).toEqual({ enabled: false, level: 'subscriber_global' });
    expect(decideChannel('chat', open, { enabled: false, channels: {} }, { channels: { chat: true } })).toEqual({ enabled: true, level: 'subscriber_workflow' });
    expect(decideChannel('in_app', open, { channels: { in_app: true } }, { enabled: false, channels: {} })).toEqual({ enabled: false, level: 'subscriber_workflow' });
  });

  it('critical and read-only ignore enabled: false too', () => {
    const off = { enabled: false, channels: {} };
    expect(decideChannel('email', { ...open, critical: true }, off, off).enabled).toBe(true);
    expect(decideChannel('email', { ...open, readOnly: true }, off, off).enabled).toBe(true);
  });

  it('workflowDefaultsOf reads preferenceSettings, readOnly (absent: false) and critical', () => {
    expect(workflowDefaultsOf({ preferenceSettings: { sms: false }, critical: false })).toEqual({ channels: { sms: false }, readOnly: false, critical: false });
    expect(workflowDefaultsOf({ preferenceSettings: {}, readOnly: true, critical: true })).toEqual({ channels: {}, readOnly: true, critical: true });
  });
});

describe('the global-wipes-workflow rule', () => {
  const records = [
    { id: 'w1', channels: { email: false, sms: true } },
    { id: 'w2', channels: { push: false } },
    { id: 'w3', enabled: false, channels: { email: true } },
  ];

  it('removes every written channel from each workflow record holding it, and returns only those records', () => {
    expect(withoutGlobalChannels(records, { email: true })).toEqual([
      { id: 'w1', channels: { sms: true } },
      { id: 'w3', enabled: false, channels: {} },
    ]);
  });

  it('removes a channel whatever value the global write gives it (on or off)', () => {
    expect(withoutGlobalChannels(records, { sms: false, push: true })).toEqual([
      { id: 'w1', channels: { email: false } },
      { id: 'w2', channels: {} },
    ]);
  });

  it('a write without channels changes nothing', () => {
    expect(withoutGlobalChannels(records, {})).toEqual([]);
  });

  it('after the wipe, the latest global value decides the channel everywhere', () => {
    const [w1] = withoutGlobalChannels(records, { email: true });
    const defaults = { channels: {}, readOnly: false, critical: false };
    expect(decideChannel('email', defaults, { channels: { email: true } }, records[0])).toEqual({ enabled: false, level: 'subscriber_workflow' });
    expect(decideChannel('email', defaults, { channels: { email: true } }, w1)).toEqual({ enabled: true, level: 'subscriber_global' });
  });
});

describe('record helpers', () => {
  it('withChannels changes only the channels given', () => {
    expect(withChannels({ channels: { email: false, sms: true } }, { sms: false, chat: true })).toEqual({ channels: { email: false, sms: false, chat: true } });
  });

  it('effectiveGlobalChannels lists every channel: on unless turned off, all off when disabled', () => {
    expect(effectiveGlobalChannels(undefined)).toEqual({ in_app: true, email: true, sms: true, chat: true, push: true });
    expect(effectiveGlobalChannels({ channels: { sms: false } })).toEqual({ in_app: true, email: true, sms: false, chat: true, push: true });
    expect(effectiveGlobalChannels({ enabled: false, channels: { sms: true } })).toEqual({ in_app: false, email: false, sms: false, chat: false, push: false });
  });
});
