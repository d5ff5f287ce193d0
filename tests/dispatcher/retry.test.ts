import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.js';
import { hasNextAttempt, retryDelayMs } from '../../dispatcher/retry.js';
import { retryAfterMs } from '../../dispatcher/back-pressure.js';

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

describe('the auto-disable setting (decisions.md 12)', () => {
  it('disables after 120 hours of failure unless TURNOUT_WEBHOOK_DISABLE_AFTER_HOURS says otherwise, and refuses nonsense', () => {
    expect(loadConfig({}, []).webhookDisableAfterHours).toBe(120);
    expect(loadConfig({ TURNOUT_WEBHOOK_DISABLE_AFTER_HOURS: '24' }, []).webhookDisableAfterHours).toBe(24);
    expect(() => loadConfig({ TURNOUT_WEBHOOK_DISABLE_AFTER_HOURS: '0' }, [])).toThrow(/TURNOUT_WEBHOOK_DISABLE_AFTER_HOURS must be a whole number of at least 1/);
  });
});

describe("a receiver's Retry-After (decisions.md 12)", () => {
  const now = Date.parse('2026-11-23T12:00:00Z');
  const max = 3_600_000;

  it('is honoured on 429 and 503, in seconds or as an HTTP date', () => {
    expect(retryAfterMs(429, '120', now, max)).toBe(120_000);
    expect(retryAfterMs(503, ' 7 ', now, max)).toBe(7_000);
    expect(retryAfterMs(503, 'Mon, 23 Nov 2026 12:05:00 GMT', now, max)).toBe(300_000);
  });

  it('is capped at the retry maximum, and a moment already past means at once', () => {
    expect(retryAfterMs(429, '86400', now, max)).toBe(max);
    expect(retryAfterMs(429, 'Mon, 23 Nov 2026 11:00:00 GMT', now, max)).toBe(1);
    expect(retryAfterMs(429, '0', now, max)).toBe(1);
  });

  it('leaves the backoff in charge on other statuses, without the header, or with one that is neither form', () => {
    expect(retryAfterMs(500, '10', now, max)).toBeNull();
    expect(retryAfterMs(null, '10', now, max)).toBeNull();
    expect(retryAfterMs(429, null, now, max)).toBeNull();
    expect(retryAfterMs(429, 'soon', now, max)).toBeNull();
    expect(retryAfterMs(429, '-5', now, max)).toBeNull();
  });
});
