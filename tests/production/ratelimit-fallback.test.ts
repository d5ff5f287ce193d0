import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FallbackRateLimiter, type SharedRateLimiter } from '../../runtime/ratelimit-fallback.js';
import { NatsRateLimiter } from '../../runtime/ratelimit-nats.js';
import { NatsLink } from '../../dispatcher/queue/nats-link.js';
import { startNats, type NatsServer, waitUntil } from '../support/nats.js';

describe('per-key rate limits when their shared store goes away', () => {
  let nats: NatsServer;
  let nc: NatsConnection;

  beforeAll(async () => {
    nats = await startNats();
    nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
  });

  it('counts in the process within 100 ms while NATS is stopped, says so once, and shares again once it is back', async () => {
    const limits = { perSecond: 0, perMinute: 5 };
    const reports: string[] = [];
    const link = new NatsLink(nc);
    const limiter = new FallbackRateLimiter(await NatsRateLimiter.open(nc, limits, { bucket: 'rl_fallback' }), limits, { report: (m) => reports.push(m), probeEveryMs: 200, connected: () => link.up });
    try {
      expect((await limiter.take('key:1')).allowed).toBe(true);
      expect(limiter.status().state).toBe('caught_up');

      await nats.halt();
      const answers: Array<{ allowed: boolean; ms: number }> = [];
      for (let i = 0; i < 6; i++) {
        const started = performance.now();
        const d = await limiter.take('key:1');
        answers.push({ allowed: d.allowed, ms: performance.now() - started });
      }
      // None waits more than the time-out (a generous bound for a busy machine): the first few
      // may wait it out, until the connection is seen down or three in a row time out.
      for (const a of answers) expect(a.ms).toBeLessThan(1_000);
      expect(answers.filter((a) => a.ms >= 90).length).toBeLessThanOrEqual(3);
      // The local count starts empty: five served, the sixth refused.
      expect(answers.map((a) => a.allowed)).toEqual([true, true, true, true, true, false]);
      expect(limiter.status()).toEqual({ name: 'rate-limits', state: 'reconnecting', behind: null });
      expect(reports).toHaveLength(1);
      expect(reports[0]).toMatch(/shared store is unreachable/);

      await nats.resume();
      await waitUntil('the limits to be shared again', () => !limiter.fallenBack, 20_000);
      expect(reports).toHaveLength(2);
      expect(reports[1]).toMatch(/answers again/);
      // The shared log has the one served before the outage: four more, then refused.
      const after = [];
      for (let i = 0; i < 5; i++) after.push((await limiter.take('key:1')).allowed);
      expect(after).toEqual([true, true, true, true, false]);
    } finally {
      await limiter.close();
    }
  }, 60_000);

  it('falls back on a store that answers too slowly, and never leaves its late answer unhandled', async () => {
    let release: () => void = () => undefined;
    let probeAnswers = false;
    const slow: SharedRateLimiter = {
      take: () => new Promise((_, reject) => (release = () => reject(new Error('late')))),
      probe: () => (probeAnswers ? Promise.resolve() : new Promise(() => undefined)),
    };
    const reports: string[] = [];
    const limiter = new FallbackRateLimiter(slow, { perSecond: 3, perMinute: 0 }, { timeoutMs: 50, slowInARow: 2, probeEveryMs: 100, report: (m) => reports.push(m) });
    // Slow answers while a probe answers (contention on a key, not an outage): counted here one
    // at a time, the store kept.
    probeAnswers = true;
    const started = performance.now();
    expect((await limiter.take('k', 1_000)).allowed).toBe(true);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect((await limiter.take('k', 1_001)).allowed).toBe(true);
    await new Promise((r) => setTimeout(r, 20));
    expect(limiter.fallenBack).toBe(false);
    expect(reports).toEqual([]);
    // Slow answers and a probe that gets none: the store is away.
    probeAnswers = false;
    await limiter.take('k', 1_002);
    await limiter.take('k', 1_003);
    await waitUntil('the fallback', () => limiter.fallenBack, 5_000);
    release();
    expect((await limiter.take('k', 1_004)).allowed).toBe(false);
    expect(reports).toEqual([expect.stringMatching(/no answer within 50 ms 2 times in a row, nor to a probe/)]);
    await limiter.close();
  });
});
