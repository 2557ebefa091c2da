import { describe, expect, it } from 'vitest';
import { allFulfilled, CoalescedBatches } from '../../src/store/coalesced-batches.js';

/** The coalescing shared by BullMQ adds, Redis rate-limit hits and PostgreSQL's trigger and subscriber statements. */
describe('CoalescedBatches', () => {
  /** A sender that records its batches and answers each when the test lets it. */
  function gatedSender(answer: (inputs: number[]) => Array<PromiseSettledResult<string>> = (inputs) => inputs.map((n) => ({ status: 'fulfilled', value: `#${n}` }))) {
    const batches: number[][] = [];
    const gates: Array<() => void> = [];
    let fail: Error | undefined;
    const send = async (inputs: number[]) => {
      batches.push(inputs);
      await new Promise<void>((resolve) => gates.push(resolve));
      if (fail) throw fail;
      return answer(inputs);
    };
    return { send, batches, open: () => gates.shift()?.(), failNext: (error: Error) => void (fail = error) };
  }

  it('sends a lone call at once, and the calls made meanwhile together after it, at most maxBatch at a time', async () => {
    const sender = gatedSender();
    const batches = new CoalescedBatches(sender.send, 2);
    const first = batches.run(1);
    expect(sender.batches).toEqual([[1]]);
    const rest = [batches.run(2), batches.run(3), batches.run(4)];
    expect(sender.batches).toEqual([[1]]);
    sender.open();
    expect(await first).toBe('#1');
    expect(sender.batches).toEqual([[1], [2, 3]]);
    sender.open();
    await new Promise((resolve) => setImmediate(resolve));
    expect(sender.batches).toEqual([[1], [2, 3], [4]]);
    sender.open();
    expect(await Promise.all(rest)).toEqual(['#2', '#3', '#4']);
    // Idle again: the next call goes out at once.
    const again = batches.run(5);
    expect(sender.batches.at(-1)).toEqual([5]);
    sender.open();
    expect(await again).toBe('#5');
  });

  it('fails only the caller whose result is rejected, and every caller of a batch that throws', async () => {
    const sender = gatedSender((inputs) => inputs.map((n) => (n === 3 ? { status: 'rejected', reason: new Error('three') } : { status: 'fulfilled', value: `#${n}` })));
    const batches = new CoalescedBatches(sender.send, 10);
    const first = batches.run(1);
    const [two, three] = [batches.run(2), batches.run(3)];
    sender.open();
    await first;
    sender.open();
    expect(await two).toBe('#2');
    await expect(three).rejects.toThrow('three');

    const lone = batches.run(4);
    sender.failNext(new Error('down'));
    sender.open();
    await expect(lone).rejects.toThrow('down');
  });

  it('allFulfilled answers every input of a batch with one value', () => {
    expect(allFulfilled(2, undefined)).toEqual([{ status: 'fulfilled', value: undefined }, { status: 'fulfilled', value: undefined }]);
  });
});
