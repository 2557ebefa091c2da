import { describe, expect, it } from 'vitest';
import type { Workflow } from '../../../src/domain/workflow.js';
import { WorkflowCache } from '../../../src/store/sql/workflow-cache.js';

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
