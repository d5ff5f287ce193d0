import { describe, expect, it } from 'vitest';
import { Backoff, backoffDelay } from '../../eventlog/backoff.js';

describe('the back-off between retries of a failing step', () => {
  it('doubles from the first wait up to the longest, and starts over after a success', () => {
    const middle = new Backoff({ initialMs: 100, maxMs: 1_000 }, () => 0.5);
    expect(Array.from({ length: 6 }, () => middle.next())).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    middle.reset();
    expect(middle.next()).toBe(100);
  });

  it('draws each wait within 10% of its nominal value, never past the longest', () => {
    const low = new Backoff({ initialMs: 100, maxMs: 1_000 }, () => 0);
    const high = new Backoff({ initialMs: 100, maxMs: 1_000 }, () => 0.999_999);
    expect(Array.from({ length: 5 }, () => low.next())).toEqual([90, 180, 360, 720, 900]);
    expect(Array.from({ length: 5 }, () => high.next())).toEqual([110, 220, 440, 880, 1_000]);
  });

  it('gives, for a count of failures kept elsewhere, the wait the stateful back-off gives at that count', () => {
    const policy = { initialMs: 60_000, maxMs: 3_600_000 };
    const stateful = new Backoff(policy, () => 0.25);
    for (let failures = 1; failures <= 10; failures++) expect(backoffDelay(policy, failures, () => 0.25)).toBe(stateful.next());
  });
});
