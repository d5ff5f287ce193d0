import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryRateLimiter, step } from '../../runtime/ratelimit.js';
import { startTestApp, type TestApp } from '../support/app.js';

describe('per-key rate limits over HTTP', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ rateLimitPerSecond: 15, rateLimitPerMinute: 600 });
  });
  afterAll(() => t.close());

  it('lets a burst of 15 through, then answers 429 with Retry-After, and never slows another key', async () => {
    const team = await t.team([['A', 'read_only'], ['B', 'read_only']]);
    const answers = await Promise.all(Array.from({ length: 20 }, () => team.api.A.get('/constituents')));
    const ok = answers.filter((r) => r.status === 200);
    const limited = answers.filter((r) => r.status === 429);
    // At most 15 in any rolling second: exactly 15 of 20 sent at once.
    expect(ok.length).toBe(15);
    expect(ok.length + limited.length).toBe(20);
    expect(limited[0].body.error.code).toBe('rate_limited');
    expect(Number(limited[0].headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(String(limited[0].headers['retry-after'])).toMatch(/^\d+$/);
    expect(ok[0].headers['ratelimit-limit']).toBeDefined();
    expect(ok[0].headers['ratelimit-remaining']).toBeDefined();
    const other = await team.api.B.get('/constituents');
    expect(other.status).toBe(200);
  });

  it('counts every /api/v1 resource against one limit per key', async () => {
    const team = await t.team([['A', 'read_only']]);
    const paths = ['/constituents', '/events', '/volunteer-tasks', '/event-tickets', '/lookups'];
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => team.api.A.get(paths[i % paths.length])));
    const ok = answers.filter((r) => r.status === 200).length;
    expect(ok).toBe(15);
    expect(answers.filter((r) => r.status === 429).length).toBe(20 - ok);
  });
});

/**
 * The most times that fall in any real span of `ms`. Times are whole milliseconds (the floor of
 * the real time), so two logged `ms` apart may really be less than `ms` apart: both ends count.
 */
function maxInAnyWindow(times: number[], ms: number): number {
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i] - times[j] > ms) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/** Runs request times through the pure step; returns the times served and every decision. */
function serve(limits: { perSecond: number; perMinute: number }, times: number[]) {
  let log: number[] | undefined;
  const served: number[] = [];
  const decisions = times.map((at) => {
    const r = step(limits, log, at);
    log = r.log;
    if (r.decision.allowed) served.push(at);
    return r.decision;
  });
  return { served, decisions };
}

describe('the rolling windows', () => {
  const limits = { perSecond: 15, perMinute: 600 };

  it('serves at most 15 in any rolling second where the bucket served 29 (a burst, then its refill)', () => {
    // A burst at 0, then a request every 10 ms: the old bucket refilled 15/s on top of its burst.
    const times = [...Array.from({ length: 15 }, () => 0), ...Array.from({ length: 300 }, (_, i) => 10 + i * 10)];
    const { served } = serve(limits, times);
    expect(maxInAnyWindow(served, 1000)).toBe(15);
    expect(served.filter((t) => t < 1000)).toHaveLength(15);
  });

  it('serves at most 600 in any rolling minute where the bucket served over 900 (15 a second, steadily)', () => {
    const times = Array.from({ length: 15 * 180 }, (_, i) => Math.floor((i * 1000) / 15));
    const { served } = serve(limits, times);
    expect(maxInAnyWindow(served, 60_000)).toBe(600);
    expect(maxInAnyWindow(served, 1000)).toBeLessThanOrEqual(15);
    // And it does serve that much: 600 in each of the three minutes.
    expect(served).toHaveLength(1800);
  });

  it('holds both bounds for any request pattern (property)', () => {
    fc.assert(
      // Half the times on a 250 ms grid in the first 20 s: requests exactly a window apart, the
      // edge a window must count, are common.
      fc.property(fc.array(fc.oneof(fc.integer({ min: 0, max: 150_000 }), fc.integer({ min: 0, max: 80 }).map((k) => k * 250)), { minLength: 1, maxLength: 1500 }), fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 200 }), (raw, perSecond, perMinute) => {
        const times = [...raw].sort((a, b) => a - b);
        const { served } = serve({ perSecond, perMinute }, times);
        expect(maxInAnyWindow(served, 1000)).toBeLessThanOrEqual(perSecond);
        expect(maxInAnyWindow(served, 60_000)).toBeLessThanOrEqual(perMinute);
      }),
      { numRuns: 200 },
    );
  });

  it("decides in one process's limiter as the pure step does, for any keys, limits and times (property)", () => {
    fc.assert(
      // Mostly rising times (the limiter's own clock never goes back), some out of order (a
      // caller passing its own time), on a grid that puts requests exactly a window apart.
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.oneof(fc.integer({ min: 0, max: 400 }), fc.constant(1000), fc.constant(60_000), fc.integer({ min: -300, max: -1 }))), { minLength: 1, maxLength: 1200 }),
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 0, max: 120 }),
        (steps, perSecond, perMinute) => {
          const limits = { perSecond, perMinute };
          const limiter = new MemoryRateLimiter(limits);
          // The step's logs, forgotten as the limiter forgets them (every 2 minutes, those
          // with nothing left in the longest window).
          const logs = new Map<string, number[]>();
          const longest = perMinute ? 60_000 : perSecond ? 1000 : 0;
          let now = 0;
          let swept = 0;
          for (const [k, dt] of steps) {
            now = Math.max(0, now + dt);
            const key = `key:${k}`;
            const expected = step(limits, logs.get(key), now);
            logs.set(key, expected.log);
            expect(limiter.takeNow(key, now)).toEqual(expected.decision);
            if (now - swept > 120_000) {
              swept = now;
              for (const [name, log] of logs) if (!log.length || log[log.length - 1] < now - longest) logs.delete(name);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('says in Retry-After when a slot frees, and that waiting that long is enough', () => {
    const { decisions } = serve({ perSecond: 0, perMinute: 600 }, [...Array.from({ length: 600 }, (_, i) => i * 50), 40_000]);
    const refused = decisions[600];
    expect(refused.allowed).toBe(false);
    // The oldest (at 0) counts in every minute up to and including 60 000, so it leaves at 60 001:
    // 20.001 s after 40 000, said as 21 s.
    expect(refused.retryAfterSeconds).toBe(21);
    let log: number[] | undefined;
    for (let i = 0; i < 600; i++) log = step({ perSecond: 0, perMinute: 600 }, log, i * 50).log;
    expect(step({ perSecond: 0, perMinute: 600 }, log, 60_000).decision.allowed).toBe(false);
    expect(step({ perSecond: 0, perMinute: 600 }, log, 40_000 + 21_000).decision.allowed).toBe(true);
  });

  it('reports the tighter window in the headers', () => {
    const fresh = step(limits, undefined, 0).decision;
    expect(fresh).toMatchObject({ allowed: true, limit: 15, remaining: 14, resetSeconds: 1, policy: '15;w=1, 600;w=60' });
    const { decisions } = serve(limits, Array.from({ length: 598 }, (_, i) => i * 100));
    // 598 in the minute (2 left) against 10 in the last second (5 left).
    expect(decisions[597]).toMatchObject({ allowed: true, limit: 600, remaining: 2 });
  });

  it('turns a limit of 0 off', () => {
    const { served } = serve({ perSecond: 0, perMinute: 0 }, Array.from({ length: 1000 }, () => 0));
    expect(served).toHaveLength(1000);
  });
});
