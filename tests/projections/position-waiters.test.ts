import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Position } from '../../domain/shared/events.js';
import { PositionWaiters } from '../../projections/engine/status.js';

const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) });

afterEach(() => vi.useRealTimers());

describe('PositionWaiters', () => {
  it('wakes the waiters a position covers, and gives up on each of the others its own time-out after it began', async () => {
    vi.useFakeTimers();
    const waiters = new PositionWaiters(1_000);
    const outcome = (p: Promise<void>) => p.then(
      () => 'reached',
      (e: Error) => e.message,
    );
    const first = outcome(waiters.wait(at(5)));
    const second = outcome(waiters.wait(at(9)));
    await vi.advanceTimersByTimeAsync(400);
    const third = outcome(waiters.wait(at(9)));
    expect(waiters.reach(at(6))).toBe(true);
    expect(await first).toBe('reached');

    await vi.advanceTimersByTimeAsync(600);
    expect(await second).toBe('read models did not reach position 9 within 1000 ms');
    // Begun 400 ms later, it has 400 ms left.
    await vi.advanceTimersByTimeAsync(399);
    let late: string | null = null;
    void third.then((r) => (late = r));
    await vi.advanceTimersByTimeAsync(0);
    expect(late).toBeNull();
    await vi.advanceTimersByTimeAsync(1);
    expect(await third).toBe('read models did not reach position 9 within 1000 ms');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('answers a position already reached at once, and leaves no timer once every waiter is answered', async () => {
    vi.useFakeTimers();
    const waiters = new PositionWaiters(1_000);
    waiters.reach(at(3));
    await waiters.wait(at(2));
    const pending = Array.from({ length: 50 }, (_, i) => waiters.wait(at(4 + i)));
    expect(vi.getTimerCount()).toBe(1);
    waiters.reach(at(60));
    await Promise.all(pending);
    expect(vi.getTimerCount()).toBe(0);
  });
});
