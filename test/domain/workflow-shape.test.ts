import { describe, expect, it } from 'vitest';
import type { StepFilter } from '../../src/domain/types.js';
import type { Workflow, WorkflowStep } from '../../src/domain/workflow.js';
import { deepFreeze, isDeepFrozen } from '../../src/domain/deep-freeze.js';
import { stepMetadata, toJobStep, toNotificationEventTemplate, toWorkflowTemplate, workflowTemplateOf } from '../../src/domain/workflow-shape.js';

const filter: StepFilter = { isNegated: false, type: 'GROUP', value: 'OR', children: [{ field: 'plan', value: 'pro', operator: 'EQUAL', on: 'payload' }] };

const digest: WorkflowStep = {
  _id: 'aaaaaaaaaaaaaaaaaaaaaaa1',
  stepId: 'collect',
  name: 'Collect',
  type: 'digest',
  active: true,
  shouldStopOnFail: false,
  controls: { type: 'regular', amount: 5, unit: 'minutes', digestKey: 'payload.orderId', label: 'ignored as metadata' },
  filters: [],
};
const email: WorkflowStep = {
  _id: 'aaaaaaaaaaaaaaaaaaaaaaa2',
  stepId: 'mail',
  name: 'Mail',
  type: 'email',
  active: false,
  shouldStopOnFail: true,
  controls: { subject: 'Hi {{ subscriber.firstName }}', body: 'b' },
  filters: [filter],
  variants: [{ _id: 'aaaaaaaaaaaaaaaaaaaaaaa3', stepId: 'mail', name: 'Pro mail', type: 'email', active: true, shouldStopOnFail: false, controls: { subject: 'Pro' }, filters: [filter] }],
};

const workflow: Workflow = {
  _id: 'bbbbbbbbbbbbbbbbbbbbbbbb',
  _environmentId: 'env',
  _organizationId: 'org',
  workflowId: 'order-shipped',
  name: 'Order shipped',
  description: 'd',
  tags: ['orders'],
  active: true,
  draft: false,
  critical: true,
  severity: 'high',
  preferenceSettings: { sms: false },
  payloadSchema: { type: 'object', properties: { orderId: { type: 'string' }, total: { type: 'number' } } },
  steps: [digest, email],
  data: { team: 'x' },
  _notificationGroupId: 'cccccccccccccccccccccccc',
  origin: 'novu-cloud',
  _creatorId: 'creator',
  deleted: false,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

describe('toWorkflowTemplate', () => {
  it("gives the spec's Workflow shape with the workflowId as trigger identifier", () => {
    const template = toWorkflowTemplate(workflow);
    expect(template).toMatchObject({
      _id: workflow._id,
      name: 'Order shipped',
      description: 'd',
      active: true,
      draft: false,
      critical: true,
      preferenceSettings: { sms: false },
      tags: ['orders'],
      triggers: [{ type: 'event', identifier: 'order-shipped', variables: [{ name: 'orderId' }, { name: 'total' }] }],
      _organizationId: 'org',
      _creatorId: 'creator',
      _environmentId: 'env',
      _notificationGroupId: 'cccccccccccccccccccccccc',
      notificationGroup: { _id: 'cccccccccccccccccccccccc', name: 'General', _environmentId: 'env', _organizationId: 'org' },
      deleted: false,
      deletedAt: '',
      deletedBy: '',
      data: { team: 'x' },
    });
    expect(template.steps[0]).toEqual({
      _id: digest._id,
      uuid: 'collect',
      name: 'Collect',
      _templateId: digest._id,
      active: true,
      shouldStopOnFail: false,
      template: { type: 'digest', ...digest.controls },
      filters: [],
      metadata: { type: 'regular', amount: 5, unit: 'minutes', digestKey: 'payload.orderId' },
    });
    expect(template.steps[1]).toMatchObject({ active: false, shouldStopOnFail: true, filters: [filter], variants: [{ name: 'Pro mail' }] });
    expect(template.steps[1].metadata).toBeUndefined();
  });

  it('carries deletedAt/deletedBy of a deleted workflow and no variables without a schema', () => {
    const { payloadSchema: _schema, ...rest } = workflow;
    const template = toWorkflowTemplate({ ...rest, deleted: true, deletedAt: '2026-02-01T00:00:00.000Z', deletedBy: 'key1' });
    expect(template).toMatchObject({ deleted: true, deletedAt: '2026-02-01T00:00:00.000Z', deletedBy: 'key1' });
    expect(template.triggers[0].variables).toEqual([]);
  });
});

describe('workflowTemplateOf', () => {
  it('makes one deep-frozen template per deep-frozen workflow (the workflow cache\'s shared copy), equal to toWorkflowTemplate', () => {
    const cached = deepFreeze(structuredClone(workflow));
    const first = workflowTemplateOf(cached);
    expect(workflowTemplateOf(cached)).toBe(first);
    expect(first).toEqual(toWorkflowTemplate(workflow));
    expect(isDeepFrozen(first)).toBe(true);
    // Another cached copy (after an update, or the entry's lapse) gets its own.
    const next = deepFreeze(structuredClone({ ...workflow, name: 'Order sent' }));
    expect(workflowTemplateOf(next)).not.toBe(first);
    expect(workflowTemplateOf(next).name).toBe('Order sent');
  });

  it('makes a new template each time for a workflow that can still change', () => {
    const copy = structuredClone(workflow);
    const first = workflowTemplateOf(copy);
    expect(workflowTemplateOf(copy)).not.toBe(first);
    expect(Object.isFrozen(first)).toBe(false);
    // Frozen at its top only: its steps can change, so its template is not kept.
    const shallow = Object.freeze(structuredClone(workflow));
    const before = workflowTemplateOf(shallow);
    (shallow.steps[0] as { name: string }).name = 'Gather';
    expect(workflowTemplateOf(shallow)).not.toBe(before);
    expect(workflowTemplateOf(shallow).steps[0]?.name).toBe('Gather');
  });
});

describe('toNotificationEventTemplate', () => {
  const base = {
    _id: workflow._id,
    name: 'Order shipped',
    triggers: [{ type: 'event', identifier: 'order-shipped', variables: [{ name: 'orderId' }, { name: 'total' }] }],
  };

  it.each(['novu-cloud', 'novu-cloud-v1'] as const)('leaves out origin %s, which the spec and Novu clients name differently', (origin) => {
    expect(toNotificationEventTemplate({ ...workflow, origin })).toEqual(base);
  });

  it('keeps origin external, valid for both', () => {
    expect(toNotificationEventTemplate({ ...workflow, origin: 'external' })).toEqual({ ...base, origin: 'external' });
  });
});

describe('toJobStep', () => {
  it('gives the JobStep with controls, metadata and nested variants', () => {
    expect(toJobStep(digest)).toEqual({
      _id: digest._id,
      active: true,
      filters: [],
      _templateId: digest._id,
      name: 'Collect',
      _parentId: null,
      template: { type: 'digest', ...digest.controls },
      controlVariables: digest.controls,
      metadata: { type: 'regular', amount: 5, unit: 'minutes', digestKey: 'payload.orderId' },
    });
    const jobStep = toJobStep(email);
    expect(jobStep).toMatchObject({ _id: email._id, active: false, filters: [filter], _parentId: null });
    expect(jobStep.metadata).toBeUndefined();
    expect(jobStep.variants).toEqual([
      expect.objectContaining({ _id: 'aaaaaaaaaaaaaaaaaaaaaaa3', _parentId: email._id, name: 'Pro mail', controlVariables: { subject: 'Pro' } }),
    ]);
  });

  it('picks delay and throttle metadata', () => {
    expect(stepMetadata({ type: 'delay', controls: { type: 'scheduled', delayPath: 'payload.at', body: 'x' } })).toEqual({ type: 'scheduled', delayPath: 'payload.at' });
    expect(stepMetadata({ type: 'throttle', controls: { amount: 1, unit: 'hours', threshold: 3, throttleKey: 'k' } })).toEqual({ amount: 1, unit: 'hours', threshold: 3, throttleKey: 'k' });
    expect(stepMetadata({ type: 'sms', controls: { body: 'x' } })).toBeUndefined();
  });
});
