import { describe, expect, it } from 'vitest';
import { requestBurst } from '../../src/worker/request-burst.js';

describe('requestBurst', () => {
  it('is active while the last `count` requests all arrived within the window', () => {
    const burst = requestBurst({ count: 3, windowMs: 20 });
    expect(burst.active(0)).toBe(false);
    burst.arrived(100);
    burst.arrived(105);
    expect(burst.active(106)).toBe(false); // two requests are not a burst of three
    burst.arrived(110);
    expect(burst.active(110)).toBe(true);
    expect(burst.active(119)).toBe(true); // the oldest of the three arrived 19 ms before
    expect(burst.active(120)).toBe(false); // and 20 ms before: it has left the window
    burst.arrived(121);
    expect(burst.active(122)).toBe(true); // 105, 110, 121
  });

  it('never counts a lone poll as a burst, however long it goes on', () => {
    // A client asking once every 50 ms (bench:http's wait for the last message during the drain).
    const burst = requestBurst({ count: 3, windowMs: 20 });
    for (let at = 0; at < 5_000; at += 50) {
      burst.arrived(at);
      expect(burst.active(at)).toBe(false);
      expect(burst.active(at + 10)).toBe(false);
    }
  });

  it('with a count of one, is the old rule: a request within the window', () => {
    const burst = requestBurst({ count: 1, windowMs: 20 });
    burst.arrived(50);
    expect(burst.active(69)).toBe(true);
    expect(burst.active(70)).toBe(false);
  });
});
