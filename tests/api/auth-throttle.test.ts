import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
let team: Awaited<ReturnType<TestApp['team']>>;

beforeAll(async () => {
  t = await startTestApp({ rateLimitPerSecond: 15, rateLimitPerMinute: 600 });
  team = await t.team();
});
afterAll(() => t.close());
afterEach(() => vi.useRealTimers());

const call = (url: string, address: string, authorization?: string) =>
  t.app.inject({ method: 'GET', url, remoteAddress: address, headers: authorization ? { authorization } : {} });

describe('failed authentications from one address', () => {
  it('answer 401 up to 60 in a minute, then 429 with Retry-After until the oldest leaves the minute, and never slow a valid key', async () => {
    // The limiter's clock is monotonic (performance.now): both clocks move together.
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    vi.setSystemTime(1_000_000);
    const address = '203.0.113.7';
    for (let i = 0; i < 60; i++) {
      const r = await call('/api/v1/constituents', address, `Bearer tko_wrong${i}`);
      expect(r.statusCode, `failure ${i + 1}`).toBe(401);
      expect(r.headers['ratelimit-limit']).toBe('60');
      expect(r.headers['ratelimit-remaining']).toBe(String(59 - i));
    }
    vi.advanceTimersByTime(30_000);
    for (const authorization of ['Bearer tko_wrong', undefined, 'Basic abc']) {
      const r = await call('/api/v1/constituents', address, authorization);
      expect(r.statusCode).toBe(429);
      expect(r.json()).toEqual({ error: { code: 'rate_limited', message: expect.stringContaining('failed authentications') } });
      // The oldest failure counts up to and including a minute after it: it leaves 30.001 s from now.
      expect(r.headers['retry-after']).toBe('31');
    }
    // A valid key from the same address is served as ever.
    const valid = await call('/api/v1/constituents', address, `Bearer ${team.keys.Integration.key}`);
    expect(valid.statusCode).toBe(200);
    // Another address is untouched.
    expect((await call('/api/v1/constituents', '203.0.113.8', 'Bearer tko_wrong')).statusCode).toBe(401);
    // Just past a minute after the first failures, 401 again.
    vi.advanceTimersByTime(30_001);
    expect((await call('/api/v1/constituents', address, 'Bearer tko_wrong')).statusCode).toBe(401);
  });

  it('count wrong admin tokens the same way', async () => {
    const address = '203.0.113.9';
    for (let i = 0; i < 60; i++) expect((await call('/admin/v1/teams', address, `Bearer adm_wrong${i}`)).statusCode).toBe(401);
    const r = await call('/admin/v1/teams', address, 'Bearer adm_wrong');
    expect(r.statusCode).toBe(429);
    expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });
});

describe('rate-limit headers', () => {
  it('come with every /api/v1 answer of a key: success, validation error, unknown path', async () => {
    const key = `Bearer ${team.keys.Integration.key}`;
    for (const url of ['/api/v1/constituents', '/api/v1/constituents?pageSize=0', '/api/v1/nothing-here', '/api/v1/constituents/999999']) {
      const r = await call(url, '198.51.100.1', key);
      expect(r.statusCode, url).toBeLessThan(500);
      for (const h of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) expect(r.headers[h], `${url} ${h}`).toMatch(/^\d+$/);
    }
  });

  it('authenticate an unknown /api/v1 path before saying it is not there', async () => {
    expect((await call('/api/v1/nothing-here', '198.51.100.2')).statusCode).toBe(401);
  });
});
