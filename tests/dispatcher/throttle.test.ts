import { describe, expect, it } from 'vitest';
import { HOLD_MS, MemoryThrottle } from '../../dispatcher/throttle.js';

/** Books `count` sends at `now` and returns when each would go (or null when deferred). */
function bookAll(t: MemoryThrottle, perSecond: number, count: number, now: number, endpoint = 1) {
  return Array.from({ length: count }, () => {
    const b = t.book(endpoint, perSecond, now);
    return 'waitMs' in b ? now + b.waitMs : null;
  });
}

describe('the per-endpoint throttle (maxPerSecond, decisions.md 12)', () => {
  it('never books more than n sends in any one-second window', () => {
    const t = new MemoryThrottle();
    const sends: number[] = [];
    for (let now = 0; now < 5000; now += 37) for (const at of bookAll(t, 4, 3, now)) if (at !== null) sends.push(at);
    sends.sort((a, b) => a - b);
    expect(sends.length).toBeGreaterThan(10);
    for (let i = 4; i < sends.length; i++) expect(sends[i] - sends[i - 4]).toBeGreaterThanOrEqual(1000);
  });

  it('lets a burst of n through at once, holds the next within the hold, and defers beyond it', () => {
    const t = new MemoryThrottle();
    expect(bookAll(t, 2, 2, 0)).toEqual([0, 0]);
    const [held] = bookAll(t, 2, 1, 500);
    expect(held).toBeGreaterThanOrEqual(1000);
    expect(held! - 500).toBeLessThanOrEqual(HOLD_MS);
    expect(bookAll(t, 2, 2, 500)).toEqual([expect.any(Number), null]);
  });

  it('spreads deferred tasks at the endpoint\'s rate instead of sending them all back at once', () => {
    const t = new MemoryThrottle();
    bookAll(t, 1, 2, 0);
    const defers = Array.from({ length: 5 }, () => t.book(1, 1, 0)).map((b) => ('deferMs' in b ? b.deferMs : -1));
    for (let i = 1; i < defers.length; i++) expect(defers[i] - defers[i - 1]).toBeGreaterThanOrEqual(1000);
  });

  it('keeps endpoints apart', () => {
    const t = new MemoryThrottle();
    bookAll(t, 1, 3, 0, 1);
    expect(t.book(2, 1, 0)).toEqual({ waitMs: 0 });
  });
});
