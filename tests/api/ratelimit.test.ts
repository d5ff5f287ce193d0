import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { step } from '../../runtime/ratelimit.js';
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
    // 15 at once, give or take the one token that refills every 66 ms while they are served.
    expect(ok.length).toBeGreaterThanOrEqual(15);
    expect(ok.length).toBeLessThanOrEqual(16);
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
    expect(ok).toBeGreaterThanOrEqual(15);
    expect(ok).toBeLessThanOrEqual(16);
    expect(answers.filter((r) => r.status === 429).length).toBe(20 - ok);
  });
});

describe('the token buckets', () => {
  const limits = { perSecond: 15, perMinute: 600 };

  it('refills the burst at 15 per second', () => {
    let buckets;
    let now = 0;
    for (let i = 0; i < 15; i++) ({ buckets } = step(limits, buckets, now));
    expect(step(limits, buckets, now).decision.allowed).toBe(false);
    now += 1000 / 15 + 1;
    const after = step(limits, buckets, now);
    expect(after.decision.allowed).toBe(true);
  });

  it('caps a steady rate at 600 per minute', () => {
    let buckets;
    let allowed = 0;
    // 20 requests a second for two minutes: the per-second bucket alone would allow 15/s.
    for (let ms = 0; ms < 120_000; ms += 50) {
      const r = step(limits, buckets, ms);
      buckets = r.buckets;
      if (r.decision.allowed) allowed++;
    }
    expect(allowed).toBeGreaterThan(1150);
    expect(allowed).toBeLessThanOrEqual(600 + 120 * 10 + 15);
    expect(allowed).toBeLessThan(1800);
  });

  it('says how long to wait in whole seconds', () => {
    let buckets;
    for (let i = 0; i < 600; i++) ({ buckets } = step({ perSecond: 0, perMinute: 600 }, buckets, 0));
    const d = step({ perSecond: 0, perMinute: 600 }, buckets, 0).decision;
    expect(d.allowed).toBe(false);
    expect(d.retryAfterSeconds).toBe(1);
  });

  it('turns a limit of 0 off', () => {
    let buckets;
    for (let i = 0; i < 1000; i++) {
      const r = step({ perSecond: 0, perMinute: 0 }, buckets, 0);
      buckets = r.buckets;
      expect(r.decision.allowed).toBe(true);
    }
  });
});
