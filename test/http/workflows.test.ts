import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { expectErrorBody, expectIsoTimestamp, expectRecordId } from '../helpers/shape.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const filter = {
  isNegated: false,
  type: 'GROUP',
  value: 'AND',
  children: [{ field: 'plan', value: 'pro', operator: 'EQUAL', on: 'payload' }],
};

function workflowBody(workflowId: string, extra: Record<string, unknown> = {}) {
  return {
    workflowId,
    name: `Workflow ${workflowId}`,
    steps: [
      { name: 'Inbox', type: 'in_app', controlValues: { subject: 'Hi {{ subscriber.firstName }}', body: 'Order {{ payload.orderId }}' }, filters: [filter] },
      { name: 'Wait', type: 'delay', controlValues: { type: 'regular', amount: 5, unit: 'minutes' } },
      { stepId: 'mail', name: 'Mail', type: 'email', controlValues: { subject: 'S', body: '<p>{{ payload.orderId }}</p>' }, shouldStopOnFail: true },
    ],
    ...extra,
  };
}

async function create(workflowId: string, extra: Record<string, unknown> = {}, key?: string) {
  const response = await server.request('POST', '/v2/workflows', { body: workflowBody(workflowId, extra), ...(key ? { key } : {}) });
  expect(response.status).toBe(201);
  return response.body.data;
}

describe('POST /v2/workflows', () => {
  it('creates a workflow in Novu v2 shape and stores the domain record', async () => {
    const response = await server.request('POST', '/v2/workflows', {
      body: workflowBody('order-shipped', {
        description: 'Tells the customer',
        tags: ['orders'],
        severity: 'high',
        data: { team: 'logistics' },
        payloadSchema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
        preferences: { user: { all: { enabled: true, readOnly: false }, channels: { sms: { enabled: false } } } },
      }),
    });
    expect(response.status).toBe(201);
    const workflow = response.body.data;
    expectRecordId(workflow._id);
    expectIsoTimestamp(workflow.createdAt);
    expectIsoTimestamp(workflow.updatedAt);
    expect(workflow).toMatchObject({
      workflowId: 'order-shipped',
      slug: 'order-shipped',
      name: 'Workflow order-shipped',
      description: 'Tells the customer',
      tags: ['orders'],
      active: true,
      status: 'ACTIVE',
      origin: 'novu-cloud',
      severity: 'high',
      critical: false,
      validatePayload: true,
      data: { team: 'logistics' },
      preferenceSettings: { in_app: true, email: true, sms: false, chat: true, push: true },
    });
    expect(workflow.preferences.default.channels.sms).toEqual({ enabled: false });
    expect(workflow.steps.map((step: any) => [step.stepId, step.type])).toEqual([
      ['inbox', 'in_app'],
      ['wait', 'delay'],
      ['mail', 'email'],
    ]);
    const [inbox, , mail] = workflow.steps;
    expectRecordId(inbox._id);
    expect(inbox).toMatchObject({
      slug: 'inbox',
      name: 'Inbox',
      active: true,
      shouldStopOnFail: false,
      filters: [filter],
      controls: { values: { subject: 'Hi {{ subscriber.firstName }}' } },
      controlValues: { body: 'Order {{ payload.orderId }}' },
      workflowId: 'order-shipped',
      workflowDatabaseId: workflow._id,
    });
    expect(mail.shouldStopOnFail).toBe(true);

    const stored = await server.deps.store.workflows.get(server.devEnvironmentId, 'order-shipped');
    expect(stored).toMatchObject({
      _id: workflow._id,
      _environmentId: server.devEnvironmentId,
      draft: false,
      deleted: false,
      payloadSchema: { required: ['orderId'] },
      preferenceSettings: { sms: false },
    });
    expect(stored!.steps[1].controls).toEqual({ type: 'regular', amount: 5, unit: 'minutes' });
    expect(stored!.steps[0].filters).toEqual([filter]);
  });

  it('defaults active to true and maps preferences readOnly to critical', async () => {
    const workflow = await create('critical-one', { preferences: { all: { enabled: true, readOnly: true } } });
    expect(workflow.critical).toBe(true);
    expect(workflow.preferences.default.all).toEqual({ enabled: true, readOnly: true });
    const inactive = await create('inactive-one', { active: false });
    expect(inactive).toMatchObject({ active: false, status: 'INACTIVE', draft: true });
  });

  it('409 on a workflowId already used in the environment, but another environment may reuse it', async () => {
    await create('dup-id');
    const again = await server.request('POST', '/v2/workflows', { body: workflowBody('dup-id') });
    expect(again.status).toBe(409);
    expectErrorBody(again.body, 409, '/v2/workflows');
    const prod = await server.request('POST', '/v2/workflows', { body: workflowBody('dup-id'), key: server.prodKey });
    expect(prod.status).toBe(201);
  });

  it.each([
    ['missing workflowId', { name: 'x', steps: [] }, 'workflowId'],
    ['unknown step type', { workflowId: 'bad-1', name: 'x', steps: [{ name: 'a', type: 'fax' }] }, 'type'],
    ['bad filter operator', { workflowId: 'bad-2', name: 'x', steps: [{ name: 'a', type: 'sms', filters: [{ ...filter, children: [{ field: 'a', value: 'b', operator: 'ROUGHLY', on: 'payload' }] }] }] }, 'operator'],
    ['bad filter source', { workflowId: 'bad-3', name: 'x', steps: [{ name: 'a', type: 'sms', filters: [{ ...filter, children: [{ field: 'a', value: 'b', operator: 'EQUAL', on: 'actor' }] }] }] }, 'on'],
    ['duplicate stepIds', { workflowId: 'bad-4', name: 'x', steps: [{ stepId: 's', name: 'a', type: 'sms' }, { stepId: 's', name: 'b', type: 'email' }] }, 'duplicate stepId'],
    ['delay amount 0', { workflowId: 'bad-5', name: 'x', steps: [{ name: 'a', type: 'delay', controlValues: { type: 'regular', amount: 0, unit: 'minutes' } }] }, 'amount'],
    ['delay amount not integer', { workflowId: 'bad-6', name: 'x', steps: [{ name: 'a', type: 'delay', controlValues: { amount: 1.5, unit: 'minutes' } }] }, 'amount'],
    ['digest unit unknown', { workflowId: 'bad-7', name: 'x', steps: [{ name: 'a', type: 'digest', controlValues: { type: 'regular', amount: 1, unit: 'fortnights' } }] }, 'unit'],
    ['digest type unknown', { workflowId: 'bad-8', name: 'x', steps: [{ name: 'a', type: 'digest', controlValues: { type: 'sometimes' } }] }, 'type'],
    ['scheduled delay without delayPath', { workflowId: 'bad-9', name: 'x', steps: [{ name: 'a', type: 'delay', controlValues: { type: 'scheduled' } }] }, 'delayPath'],
    ['timed digest weekday', { workflowId: 'bad-10', name: 'x', steps: [{ name: 'a', type: 'digest', controlValues: { type: 'timed', timed: { weekDays: ['funday'] } } }] }, 'weekDays'],
    ['throttle threshold', { workflowId: 'bad-11', name: 'x', steps: [{ name: 'a', type: 'throttle', controlValues: { amount: 1, unit: 'hours', threshold: -1 } }] }, 'threshold'],
    ['Liquid syntax error', { workflowId: 'bad-12', name: 'x', steps: [{ name: 'a', type: 'email', controlValues: { subject: 'ok', body: 'Hi {{ payload.name ' } }] }, 'steps[0].controlValues.body'],
    ['Liquid unknown filter in nested control', { workflowId: 'bad-13', name: 'x', steps: [{ name: 'a', type: 'in_app', controlValues: { primaryAction: { label: '{{ payload.x | shout }}' } } }] }, 'steps[0].controlValues.primaryAction.label'],
    ['payload schema that does not compile', { workflowId: 'bad-14', name: 'x', steps: [], payloadSchema: { type: 'banana' } }, 'payloadSchema'],
    ['severity outside the enum', { workflowId: 'bad-15', name: 'x', steps: [], severity: 'urgent' }, 'severity'],
    ['workflowId with spaces', { workflowId: 'has space', name: 'x', steps: [] }, 'workflowId'],
  ])('400 for %s, naming the field, and nothing stored', async (_label, body, fieldHint) => {
    const response = await server.request('POST', '/v2/workflows', { body });
    expect(response.status).toBe(400);
    expectErrorBody(response.body, 400);
    expect(JSON.stringify(response.body.message)).toContain(fieldHint);
    const workflowId = (body as { workflowId?: string }).workflowId;
    if (workflowId) expect(await server.deps.store.workflows.get(server.devEnvironmentId, workflowId)).toBeUndefined();
  });

  it('derives unique stepIds from names and keeps variants', async () => {
    const response = await server.request('POST', '/v2/workflows', {
      body: {
        workflowId: 'variants',
        name: 'Variants',
        steps: [
          { name: 'Send SMS', type: 'sms', controlValues: { body: 'a' }, variants: [{ name: 'Pro SMS', type: 'sms', controlValues: { body: 'b' }, filters: [filter] }] },
          { name: 'Send SMS', type: 'sms', controlValues: { body: 'c' }, active: false },
        ],
      },
    });
    expect(response.status).toBe(201);
    const steps = response.body.data.steps;
    expect(steps.map((s: any) => s.stepId)).toEqual(['send-sms', 'send-sms-2']);
    expect(steps[1].active).toBe(false);
    expect(steps[0].variants).toHaveLength(1);
    expect(steps[0].variants[0]).toMatchObject({ name: 'Pro SMS', filters: [filter], controlValues: { body: 'b' } });
    const stored = await server.deps.store.workflows.get(server.devEnvironmentId, 'variants');
    expect(stored!.steps[0].variants![0].controls).toEqual({ body: 'b' });
  });
});

describe('GET /v2/workflows', () => {
  it('gets by _id and by workflowId; another environment gets 404', async () => {
    const created = await create('get-me');
    for (const id of [created._id, 'get-me']) {
      const response = await server.request('GET', `/v2/workflows/${id}`);
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual(created);
    }
    const other = await server.request('GET', `/v2/workflows/${created._id}`, { key: server.prodKey });
    expect(other.status).toBe(404);
    expectErrorBody(other.body, 404);
    expect(other.body.message).toBe(`Workflow with id ${created._id} not found`);
    expect((await server.request('GET', '/v2/workflows/000000000000000000000000')).status).toBe(404);
  });

  it('lists newest first with query search and offset/limit paging', async () => {
    const fresh = await startTestServer();
    try {
      for (const id of ['alpha-news', 'beta-news', 'gamma-alerts']) {
        expect((await fresh.request('POST', '/v2/workflows', { body: workflowBody(id) })).status).toBe(201);
      }
      const all = await fresh.request('GET', '/v2/workflows');
      expect(all.status).toBe(200);
      expect(all.body.data.totalCount).toBe(3);
      expect(all.body.data.workflows.map((w: any) => w.workflowId)).toEqual(['gamma-alerts', 'beta-news', 'alpha-news']);
      expect(all.body.data.workflows[0]).toMatchObject({
        slug: 'gamma-alerts',
        status: 'ACTIVE',
        origin: 'novu-cloud',
        stepTypeOverviews: ['in_app', 'delay', 'email'],
        steps: [{ slug: 'inbox', type: 'in_app' }, { slug: 'wait', type: 'delay' }, { slug: 'mail', type: 'email' }],
      });
      const searched = await fresh.request('GET', '/v2/workflows?query=NEWS&limit=1&offset=1');
      expect(searched.body.data).toMatchObject({ totalCount: 2, workflows: [{ workflowId: 'alpha-news' }] });
      const byName = await fresh.request('GET', '/v2/workflows?query=Workflow%20gamma');
      expect(byName.body.data.workflows.map((w: any) => w.workflowId)).toEqual(['gamma-alerts']);
      expect((await fresh.request('GET', '/v2/workflows?query=%25')).body.data.totalCount).toBe(0);
      expect((await fresh.request('GET', '/v2/workflows', { key: fresh.prodKey })).body.data).toEqual({ workflows: [], totalCount: 0 });
      const tooMany = await fresh.request('GET', '/v2/workflows?limit=101');
      expect(tooMany.status).toBe(400);
      expect(tooMany.body.message).toEqual(['limit must be <= 100']);
      expect((await fresh.request('GET', '/v2/workflows?offset=-1')).status).toBe(400);
    } finally {
      await fresh.close();
    }
  });
});

describe('PUT /v2/workflows/:workflowId', () => {
  it('replaces the given fields, keeps step identity by _id and stepId, and keeps absent fields', async () => {
    const created = await create('put-me', { tags: ['a'], description: 'before', severity: 'low' });
    const [inbox, , mail] = created.steps;
    const response = await server.request('PUT', `/v2/workflows/put-me`, {
      body: {
        name: 'Renamed',
        steps: [
          { _id: mail._id, name: 'Mail v2', type: 'email', controlValues: { subject: 'New {{ payload.x }}', body: 'b' } },
          { stepId: 'inbox', name: 'Inbox again', type: 'in_app', controlValues: { body: 'x' } },
          { name: 'Chat', type: 'chat', controlValues: { body: 'c' } },
        ],
        preferences: { workflow: { all: { enabled: false }, channels: { email: { enabled: true } } } },
        tags: ['b', 'c'],
      },
    });
    expect(response.status).toBe(200);
    const updated = response.body.data;
    expect(updated).toMatchObject({ _id: created._id, workflowId: 'put-me', name: 'Renamed', tags: ['b', 'c'], description: 'before', severity: 'low' });
    expect(updated.createdAt).toBe(created.createdAt);
    expect(updated.steps.map((s: any) => s._id).slice(0, 2)).toEqual([mail._id, inbox._id]);
    expect(updated.steps[0]).toMatchObject({ stepId: 'mail', name: 'Mail v2' });
    expect(updated.steps[2]._id).not.toBe(created.steps[1]._id);
    expect(updated.preferenceSettings).toEqual({ in_app: false, email: true, sms: false, chat: false, push: false });

    const stored = await server.deps.store.workflows.get(server.devEnvironmentId, created._id);
    expect(stored!.steps.map((s) => s.stepId)).toEqual(['mail', 'inbox', 'chat']);
    expect(stored!.name).toBe('Renamed');
  });

  it('renames the workflowId when free, 409 when taken', async () => {
    const created = await create('old-name');
    await create('taken-name');
    const taken = await server.request('PUT', `/v2/workflows/${created._id}`, { body: { workflowId: 'taken-name', name: 'x', steps: [] } });
    expect(taken.status).toBe(409);
    const renamed = await server.request('PUT', `/v2/workflows/${created._id}`, { body: { workflowId: 'new-name', name: 'x', steps: [] } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.workflowId).toBe('new-name');
    expect(await server.deps.store.workflows.get(server.devEnvironmentId, 'old-name')).toBeUndefined();
    expect((await server.deps.store.workflows.get(server.devEnvironmentId, 'new-name'))!._id).toBe(created._id);
  });

  it('400 for invalid steps and 404 from another environment, nothing changed', async () => {
    const created = await create('put-guard');
    const bad = await server.request('PUT', '/v2/workflows/put-guard', {
      body: { name: 'x', steps: [{ name: 'a', type: 'email', controlValues: { body: '{% if %}' } }] },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.message)).toContain('steps[0].controlValues.body');
    const other = await server.request('PUT', `/v2/workflows/${created._id}`, { key: server.prodKey, body: { name: 'hijack', steps: [] } });
    expect(other.status).toBe(404);
    const stored = await server.deps.store.workflows.get(server.devEnvironmentId, 'put-guard');
    expect(stored!.name).toBe(created.name);
    expect(stored!.steps).toHaveLength(3);
  });
});

describe('PATCH /v2/workflows/:workflowId', () => {
  it('changes only the given fields', async () => {
    const created = await create('patch-me', { payloadSchema: { type: 'object' }, tags: ['t'] });
    const response = await server.request('PATCH', '/v2/workflows/patch-me', { body: { active: false, description: 'now off' } });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ active: false, status: 'INACTIVE', description: 'now off', name: created.name, tags: ['t'] });
    expect(response.body.data.steps).toEqual(created.steps);
    let stored = await server.deps.store.workflows.get(server.devEnvironmentId, 'patch-me');
    expect(stored).toMatchObject({ active: false, draft: true, description: 'now off', payloadSchema: { type: 'object' } });

    const cleared = await server.request('PATCH', `/v2/workflows/${created._id}`, { body: { payloadSchema: null, name: 'New', tags: [] } });
    expect(cleared.body.data).toMatchObject({ payloadSchema: null, validatePayload: false, name: 'New', tags: [] });
    stored = await server.deps.store.workflows.get(server.devEnvironmentId, 'patch-me');
    expect(stored!.payloadSchema).toBeUndefined();

    const badSchema = await server.request('PATCH', '/v2/workflows/patch-me', { body: { payloadSchema: { required: 'x' } } });
    expect(badSchema.status).toBe(400);
    const other = await server.request('PATCH', '/v2/workflows/patch-me', { key: server.prodKey, body: { active: true } });
    expect(other.status).toBe(404);
    expect((await server.deps.store.workflows.get(server.devEnvironmentId, 'patch-me'))!.active).toBe(false);
  });
});

describe('DELETE /v2/workflows/:workflowId', () => {
  it('soft-deletes (204 as Novu), then 404, and frees the workflowId', async () => {
    const created = await create('delete-me');
    const other = await server.request('DELETE', `/v2/workflows/${created._id}`, { key: server.prodKey });
    expect(other.status).toBe(404);
    expect(await server.deps.store.workflows.get(server.devEnvironmentId, 'delete-me')).toBeDefined();

    const response = await server.request('DELETE', '/v2/workflows/delete-me');
    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect((await server.request('GET', `/v2/workflows/${created._id}`)).status).toBe(404);
    expect((await server.request('DELETE', '/v2/workflows/delete-me')).status).toBe(404);
    expect(await server.deps.store.workflows.get(server.devEnvironmentId, created._id)).toBeUndefined();
    const row = await (server.deps.store as any).db.selectFrom('workflows').selectAll().where('id', '=', created._id).executeTakeFirst();
    expect(row.deleted).toBe(1);
    expect(JSON.parse(row.document)).toMatchObject({ deleted: true, deletedBy: expect.any(String), deletedAt: expect.any(String) });

    const again = await server.request('POST', '/v2/workflows', { body: workflowBody('delete-me') });
    expect(again.status).toBe(201);
    expect(again.body.data._id).not.toBe(created._id);
  });

  it('401 without a key', async () => {
    const response = await server.request('GET', '/v2/workflows', { key: null });
    expect(response.status).toBe(401);
  });
});
