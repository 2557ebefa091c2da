import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { deepFreeze } from '../../../src/domain/deep-freeze.js';
import { TEMPLATE_SNAPSHOT_ID_LENGTH } from '../../../src/domain/stored-message.js';
import { TemplateSnapshots } from '../../../src/store/sql/template-snapshots.js';

const idOfText = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, TEMPLATE_SNAPSHOT_ID_LENGTH);
const template = () => ({ _id: 'w1', name: 'welcome', tags: ['a'], steps: [{ _id: 's1', template: { type: 'in_app', content: 'Hi' } }] });

describe('TemplateSnapshots.idOfTemplate', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('identifies a deep-frozen template by its object after the first time: no stringify per message', () => {
    const snapshots = new TemplateSnapshots();
    const shared = deepFreeze(template());
    const stringify = vi.spyOn(JSON, 'stringify');
    const id = snapshots.idOfTemplate(shared);
    expect(id).toBe(idOfText(JSON.stringify(template())));
    const calls = stringify.mock.calls.length;
    for (let message = 0; message < 5; message++) expect(snapshots.idOfTemplate(shared)).toBe(id);
    expect(stringify.mock.calls.length).toBe(calls);
  });

  it('stringifies a template that can still change every time, so a change gives its new id', () => {
    const snapshots = new TemplateSnapshots();
    const open = template();
    const first = snapshots.idOfTemplate(open);
    open.steps[0]!.template.content = 'Hello';
    expect(snapshots.idOfTemplate(open)).toBe(idOfText(JSON.stringify(open)));
    expect(snapshots.idOfTemplate(open)).not.toBe(first);
    // Frozen at its top only.
    const shallow = Object.freeze(template());
    const before = snapshots.idOfTemplate(shallow);
    shallow.steps[0]!.template.content = 'Hello';
    expect(snapshots.idOfTemplate(shallow)).not.toBe(before);
  });

  it('still has save write a known template\'s text (the object\'s second message included)', async () => {
    const snapshots = new TemplateSnapshots();
    const shared = deepFreeze(template());
    const id = snapshots.idOfTemplate(shared);
    snapshots.idOfTemplate(shared);
    const inserted: Array<{ id: string; text: string }> = [];
    const db = {
      isTransaction: true,
      insertInto: () => ({ values: (rows: Array<{ id: string; text: string }>) => ({ onConflict: () => ({ execute: async () => void inserted.push(...rows) }) }) }),
    };
    await snapshots.save(db as never, [id]);
    expect(inserted).toEqual([{ id, text: JSON.stringify(template()) }]);
  });
});
