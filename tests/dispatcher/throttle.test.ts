import { describe, expect, it } from 'vitest';
import { type Clock, HOLD_MS, MemoryThrottle } from '../../dispatcher/throttle.js';

/** A clock that only moves when someone sleeps: the attempts run one after another. */
function fakeClock(): Clock & { t: number } {
  const c = { t: 0, now: () => c.t, sleep: async (ms: number) => void (c.t += ms) };
  return c;
}

describe('the per-endpoint throttle (maxPerSecond, decisions.md 12)', () => {
  it('never lets more than n sends through in any one-second window', async () => {
    const clock = fakeClock();
    const t = new MemoryThrottle(clock);
    const sent: number[] = [];
    for (let i = 0; i < 40; i++) {
      clock.t += 37;
      if ((await t.admit(1, 4)).go) sent.push(clock.t);
    }
    expect(sent.length).toBeGreaterThan(10);
    for (let i = 4; i < sent.length; i++) expect(sent[i] - sent[i - 4]).toBeGreaterThanOrEqual(1000);
  });

  it('lets a burst of n through at once, waits for the next turn within the hold, and defers beyond it', async () => {
    const clock = fakeClock();
    const t = new MemoryThrottle(clock);
    expect([await t.admit(1, 2), await t.admit(1, 2)]).toEqual([{ go: true }, { go: true }]);
    clock.t = 500;
    expect(await t.admit(1, 2)).toEqual({ go: true });
    expect(clock.t).toBeGreaterThanOrEqual(1000);
    expect(clock.t - 500).toBeLessThanOrEqual(HOLD_MS);
    const before = clock.t;
    await t.admit(1, 2);
    clock.t = before;
    expect(await t.admit(1, 2)).toMatchObject({ go: false });
  });

  it("spreads deferred tasks at the endpoint's rate instead of sending them all back at once", async () => {
    const frozen = new MemoryThrottle({ now: () => 0, sleep: async () => undefined });
    await frozen.admit(1, 1);
    const defers: number[] = [];
    for (let i = 0; i < 5; i++) {
      const a = await frozen.admit(1, 1);
      defers.push(a.go ? -1 : a.deferMs);
    }
    for (let i = 1; i < defers.length; i++) expect(defers[i] - defers[i - 1]).toBeGreaterThanOrEqual(1000);
  });

  it('keeps endpoints apart', async () => {
    const t = new MemoryThrottle({ now: () => 0, sleep: async () => undefined });
    await t.admit(1, 1);
    expect(await t.admit(1, 1)).toMatchObject({ go: false });
    expect(await t.admit(2, 1)).toEqual({ go: true });
  });
});
