import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.js';
import { hasNextAttempt, retryDelayMs } from '../../dispatcher/retry.js';

describe('the retry schedule (spec 6.6, decisions.md 2)', () => {
  const policy = loadConfig({}, []).webhook;

  it('waits about 30 s, then 1, 2, 4 minutes and so on, capped at an hour', () => {
    const middle = () => 0.5; // no jitter
    const delays = Array.from({ length: 9 }, (_, i) => retryDelayMs(policy, i + 1, middle) / 1000);
    expect(delays).toEqual([30, 60, 120, 240, 480, 960, 1920, 3600, 3600]);
  });

  it('spreads retries by at most ±20%', () => {
    expect(retryDelayMs(policy, 1, () => 0)).toBe(24_000);
    expect(retryDelayMs(policy, 1, () => 1)).toBe(36_000);
  });

  it('makes 9 attempts in all by default, then abandons', () => {
    expect(policy.maxAttempts).toBe(9);
    expect(hasNextAttempt(policy, 8)).toBe(true);
    expect(hasNextAttempt(policy, 9)).toBe(false);
  });
});

describe('the delivery log retention setting', () => {
  it('keeps attempts 30 days unless TURNOUT_DELIVERY_LOG_DAYS says otherwise, and refuses nonsense', () => {
    expect(loadConfig({}, []).deliveryLogDays).toBe(30);
    expect(loadConfig({ TURNOUT_DELIVERY_LOG_DAYS: '7' }, []).deliveryLogDays).toBe(7);
    expect(() => loadConfig({ TURNOUT_DELIVERY_LOG_DAYS: '0' }, [])).toThrow(/TURNOUT_DELIVERY_LOG_DAYS must be a whole number of at least 1/);
  });
});
