import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../../../src/domain/workflow.js';
import { SecretBox } from '../../../src/store/secret-box.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import { WorkflowCache } from '../../../src/store/sql/workflow-cache.js';
import { validatePayload } from '../../../src/domain/payload-schema.js';
import { openTestSqlite, type TestSqlDatabase } from '../../helpers/databases.js';

const ENV = 'eeeeeeeeeeeeeeeeeeeeeee1';

function workflowOf(overrides: Partial<Workflow> = {}): Workflow {
  return {
    _id: '0000000000000000000000a1',
    _environmentId: ENV,
    _organizationId: 'oooooooooooooooooooooooo',
    workflowId: 'order-shipped',
    name: 'Order shipped',
    description: '',
    tags: [],
    active: true,
    draft: false,
    critical: false,
    severity: 'none',
    preferenceSettings: {},
    steps: [],
    _notificationGroupId: 'cccccccccccccccccccccccc',
    origin: 'novu-cloud',
    _creatorId: 'creator',
    deleted: false,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    ...overrides,
  } as Workflow;
}

const workflow = (name: string) => ({ _id: 'w1', workflowId: 'wf', name, steps: [] }) as unknown as Workflow;

describe('WorkflowCache', () => {
  it('answers from the cache until the environment is forgotten, with a copy each time', async () => {
    const cache = new WorkflowCache(60_000, () => true);
    let loads = 0;
    const load = async () => (loads++, workflow(`v${loads}`));
    const first = await cache.get('env', 'wf', load);
    first!.name = 'changed by the caller';
    expect((await cache.get('env', 'wf', load))!.name).toBe('v1');
    expect(loads).toBe(1);
    cache.forget('other-env');
    expect((await cache.get('env', 'wf', load))!.name).toBe('v1');
    cache.forget('env');
    expect((await cache.get('env', 'wf', load))!.name).toBe('v2');
    cache.forget();
    expect((await cache.get('env', 'wf', load))!.name).toBe('v3');
  });

  it('gives a reader that asks for it (shared) the kept object itself, frozen through, and everyone else a copy', async () => {
    const cache = new WorkflowCache(60_000, () => true);
    const loaded = { ...workflow('v1'), payloadSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } } as Workflow;
    // The first read is the loaded object (the caller's own); what is kept is a frozen copy.
    expect(await cache.get('env', 'wf', async () => loaded, { shared: true })).toBe(loaded);
    expect(Object.isFrozen(loaded)).toBe(false);
    const shared = await cache.get('env', 'wf', async () => workflow('v2'), { shared: true });
    expect(await cache.get('env', 'wf', async () => workflow('v2'), { shared: true })).toBe(shared);
    expect(Object.isFrozen(shared)).toBe(true);
    expect(() => ((shared as { name: string }).name = 'x')).toThrow(TypeError);
    expect(() => ((shared!.payloadSchema as { properties: { n: { type: string } } }).properties.n.type = 'string')).toThrow(TypeError);
    // What a trigger does with it: validate a payload against its schema (compiled afresh here, frozen).
    expect(validatePayload(shared!.payloadSchema, { n: 1 })).toEqual([]);
    expect(validatePayload(shared!.payloadSchema, {})).toEqual(['payload.n is required']);
    const own = await cache.get('env', 'wf', async () => workflow('v2'));
    expect(own).not.toBe(shared);
    own!.name = 'mine';
    expect(shared!.name).toBe('v1');
  });

  it('does not keep a read that overlapped a forget (it may have read the row before the write committed)', async () => {
    const cache = new WorkflowCache(60_000, () => true);
    let release!: () => void;
    const slow = cache.get('env', 'wf', () => new Promise<Workflow>((resolve) => (release = () => resolve(workflow('old')))));
    cache.forget('env');
    release();
    expect((await slow)!.name).toBe('old');
    expect((await cache.get('env', 'wf', async () => workflow('new')))!.name).toBe('new');
  });

  it('is not used while announcements may be missed, and keeps no misses', async () => {
    let trusted = false;
    const cache = new WorkflowCache(60_000, () => trusted);
    let loads = 0;
    await cache.get('env', 'wf', async () => (loads++, workflow('a')));
    await cache.get('env', 'wf', async () => (loads++, workflow('a')));
    expect(loads).toBe(2);
    trusted = true;
    await cache.get('env', 'wf', async () => (loads++, workflow('a')));
    trusted = false;
    await cache.get('env', 'wf', async () => (loads++, workflow('a')));
    expect(loads).toBe(4);
    trusted = true;
    expect(await cache.get('env', 'missing', async () => (loads++, undefined))).toBeUndefined();
    expect(await cache.get('env', 'missing', async () => (loads++, undefined))).toBeUndefined();
    expect(loads).toBe(6);
  });
});

describe('SqlWorkflowRepository with a WorkflowCache', () => {
  let database: TestSqlDatabase;
  let store: SqlStore;
  beforeAll(async () => {
    database = await openTestSqlite();
    store = new SqlStore(database.db, { dialect: 'sqlite', secretBox: new SecretBox(randomBytes(32)), workflowCache: new WorkflowCache(60_000, () => true) });
  });
  afterAll(async () => database?.close());

  const nameInTable = (name: string) => database.db.updateTable('workflows').set({ document: JSON.stringify(workflowOf({ name })) }).where('id', '=', workflowOf()._id).execute();

  it('answers a repeated lookup from the cache, by workflowId and by _id, each caller with an object of its own', async () => {
    await store.workflows.create(workflowOf());
    const first = await store.workflows.get(ENV, 'order-shipped');
    expect(first?.name).toBe('Order shipped');
    await store.workflows.get(ENV, workflowOf()._id);
    // Changed behind the repository's back: the kept answers still show the old document (they were not read again).
    await nameInTable('changed behind its back');
    first!.name = 'mutated by a caller';
    expect((await store.workflows.get(ENV, 'order-shipped'))?.name).toBe('Order shipped');
    expect((await store.workflows.get(ENV, workflowOf()._id))?.name).toBe('Order shipped');
  });

  it("forgets the environment's answers on every write through the repository, in a transaction or not", async () => {
    await store.workflows.save(workflowOf({ name: 'Saved' }));
    expect((await store.workflows.get(ENV, 'order-shipped'))?.name).toBe('Saved');
    await store.transaction((tx) => tx.workflows.save(workflowOf({ name: 'Saved in a transaction', active: false })));
    expect(await store.workflows.get(ENV, 'order-shipped')).toMatchObject({ name: 'Saved in a transaction', active: false });
    await store.transaction((tx) => tx.workflows.save(workflowOf({ deleted: true })));
    expect(await store.workflows.get(ENV, 'order-shipped')).toBeUndefined();
  });

  it('keeps "not found" until a workflow is created', async () => {
    expect(await store.workflows.get(ENV, 'welcome')).toBeUndefined();
    await store.workflows.create(workflowOf({ _id: '0000000000000000000000a2', workflowId: 'welcome', name: 'Welcome' }));
    expect((await store.workflows.get(ENV, 'welcome'))?.name).toBe('Welcome');
  });

  it('does not keep what a rolled-back transaction wrote', async () => {
    await expect(
      store.transaction(async (tx) => {
        await tx.workflows.save(workflowOf({ _id: '0000000000000000000000a2', workflowId: 'welcome', name: 'Never committed' }));
        expect((await tx.workflows.get(ENV, 'welcome'))?.name).toBe('Never committed');
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect((await store.workflows.get(ENV, 'welcome'))?.name).toBe('Welcome');
  });
});
