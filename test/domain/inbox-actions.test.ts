import { describe, expect, it } from 'vitest';
import { applyInboxAction } from '../../src/domain/inbox.js';
import type { Message } from '../../src/domain/types.js';

const at = '2026-03-01T00:00:00.000Z';
const withButtons = {
  _id: 'm1',
  read: false,
  seen: false,
  cta: { action: { status: 'pending', buttons: [{ type: 'primary', content: 'Pay' }] } },
} as unknown as Message;

describe('applyInboxAction: complete and revert a button', () => {
  it('marks the button done or pending and records which one, keeping a payload only when one is given', () => {
    const done = applyInboxAction(withButtons, { type: 'complete', actionType: 'primary', payload: { amount: 5 } }, at);
    expect(done.cta.action).toMatchObject({ status: 'done', result: { type: 'primary', payload: { amount: 5 } } });
    const reverted = applyInboxAction(done, { type: 'revert', actionType: 'primary' }, at);
    expect(reverted.cta.action).toMatchObject({ status: 'pending', result: { type: 'primary', payload: { amount: 5 } } });
    const plain = applyInboxAction(withButtons, { type: 'complete', actionType: 'primary' }, at);
    expect(plain.cta.action?.result).toEqual({ type: 'primary' });
    expect(withButtons.cta.action?.status).toBe('pending');
  });

  it('refuses a button the message does not have', () => {
    expect(() => applyInboxAction(withButtons, { type: 'complete', actionType: 'secondary' }, at)).toThrow(/no secondary action/);
  });
});
