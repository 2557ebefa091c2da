import { describe, expect, it } from 'vitest';
import type { Integration } from '../../../src/domain/types.js';
import { canBePrimary, highestPriorityActive, nextPriority, sameChannel } from '../../../src/usecases/integrations/channel-priority.js';

function integration(overrides: Partial<Integration>): Integration {
  return {
    _id: '000000000000000000000001', _environmentId: 'e', _organizationId: 'o', name: 'n', identifier: 'i', providerId: 'telnyx',
    channel: 'sms', kind: 'delivery', credentials: {}, configurations: {}, active: true, deleted: false, primary: false,
    priority: 1, conditions: [], createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
}

describe('channel priority rules', () => {
  it('nextPriority is one above the highest, 1 for an empty channel', () => {
    expect(nextPriority([])).toBe(1);
    expect(nextPriority([integration({ priority: 3 }), integration({ priority: 7 }), integration({ priority: 5 })])).toBe(8);
  });

  it('highestPriorityActive skips inactive and deleted ones; ties go to the newer', () => {
    const low = integration({ _id: 'a'.repeat(24), priority: 2 });
    const inactiveHigh = integration({ _id: 'b'.repeat(24), priority: 9, active: false });
    const deletedHigh = integration({ _id: 'c'.repeat(24), priority: 8, deleted: true });
    const tieOld = integration({ _id: 'd'.repeat(24), priority: 4, createdAt: '2026-01-01T00:00:00.000Z' });
    const tieNew = integration({ _id: 'e'.repeat(24), priority: 4, createdAt: '2026-02-01T00:00:00.000Z' });
    expect(highestPriorityActive([low, inactiveHigh, deletedHigh, tieOld, tieNew])?._id).toBe(tieNew._id);
    expect(highestPriorityActive([inactiveHigh, deletedHigh])).toBeUndefined();
  });

  it('only channel-bound delivery integrations can be primary; agents form their own group', () => {
    expect(canBePrimary(integration({}))).toBe(true);
    expect(canBePrimary(integration({ kind: 'agent', channel: undefined }))).toBe(false);
    expect(sameChannel(integration({ channel: 'sms' }), integration({ channel: 'sms' }))).toBe(true);
    expect(sameChannel(integration({ channel: 'sms' }), integration({ channel: 'email' }))).toBe(false);
    expect(sameChannel(integration({ kind: 'agent', channel: undefined }), integration({ kind: 'agent', channel: undefined }))).toBe(true);
  });
});
