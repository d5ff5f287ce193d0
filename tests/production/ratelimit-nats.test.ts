import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeLog, encodeLog, NatsRateLimiter } from '../../runtime/ratelimit-nats.js';
import { startNats, type NatsServer } from '../support/nats.js';

describe('per-key rate limits shared through NATS KV', () => {
  let nats: NatsServer;
  const conns: NatsConnection[] = [];
  let n = 0;
  // Two limiters on two connections stand for two API processes.
  const pair = async (limits: { perSecond: number; perMinute: number }) => {
    const bucket = `rl_test_${++n}`;
    const made: NatsRateLimiter[] = [];
    for (let i = 0; i < 2; i++) {
      const nc = await connect({ servers: nats.url });
      conns.push(nc);
      made.push(await NatsRateLimiter.open(nc, limits, { bucket }));
    }
    return made;
  };

  beforeAll(async () => {
    nats = await startNats();
  });
  afterAll(async () => {
    for (const c of conns) await c.close();
    await nats?.stop();
  });

  it('shares one burst between two limiters for the same key', async () => {
    const [a, b] = await pair({ perSecond: 5, perMinute: 0 });
    const now = 1_000_000;
    const allowed: boolean[] = [];
    for (let i = 0; i < 8; i++) allowed.push((await (i % 2 ? b : a).take('key:1', now)).allowed);
    expect(allowed).toEqual([true, true, true, true, true, false, false, false]);
    const refused = await a.take('key:1', now);
    // The burst counts up to and including now + 1000: a slot frees 1.001 s from now.
    expect(refused.retryAfterSeconds).toBe(2);
    // Another key has its own bucket.
    expect((await b.take('key:2', now)).allowed).toBe(true);
    // Slots come back once the window has passed (both of its ends count), for both.
    expect((await b.take('key:1', now + 1_000)).allowed).toBe(false);
    expect((await b.take('key:1', now + 1_001)).allowed).toBe(true);
  });

  it('lets exactly the burst through when both limiters race on one key (compare-and-swap retries)', async () => {
    const [a, b] = await pair({ perSecond: 10, perMinute: 0 });
    const now = 2_000_000;
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? b : a).take('key:race', now)));
    expect(results.filter((r) => r.allowed)).toHaveLength(10);
    expect(results.filter((r) => !r.allowed)).toHaveLength(30);
    // Every allowed take saw a distinct remaining count: no token was handed out twice.
    const remaining = results.filter((r) => r.allowed).map((r) => r.remaining).sort((x, y) => x - y);
    expect(remaining).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('applies the per-minute limit across both limiters as well', async () => {
    const [a, b] = await pair({ perSecond: 0, perMinute: 3 });
    const now = 3_000_000;
    const r = [await a.take('k', now), await b.take('k', now + 10), await a.take('k', now + 20), await b.take('k', now + 30)];
    expect(r.map((x) => x.allowed)).toEqual([true, true, true, false]);
    expect(r[3].retryAfterSeconds).toBeGreaterThanOrEqual(19);
    expect(r[3].policy).toBe('3;w=60');
  });

  it('serves at most the limit in any rolling second across both limiters, where a bucket let a burst and its refill through', async () => {
    const [a, b] = await pair({ perSecond: 15, perMinute: 600 });
    const start = 4_000_000;
    const served: number[] = [];
    // A burst at the start, then one request every 25 ms for two seconds, alternating processes.
    const times = [...Array.from({ length: 15 }, () => start), ...Array.from({ length: 80 }, (_, i) => start + 25 + i * 25)];
    for (const [i, at] of times.entries()) if ((await (i % 2 ? b : a).take('key:roll', at)).allowed) served.push(at);
    for (const t of served) expect(served.filter((u) => u >= t && u < t + 1000).length).toBeLessThanOrEqual(15);
    expect(served.filter((t) => t < start + 1000)).toHaveLength(15);
    // 15 at the start, then 15 from start + 1025 (the burst counts up to start + 1000 included);
    // the next slot frees after start + 2025, past the last request.
    expect(served).toHaveLength(30);
  });

  it("reads an entry it cannot parse (an earlier version's token buckets) as an empty log", async () => {
    expect(decodeLog([{ tokens: 3, at: 5 }])).toEqual([]);
    expect(decodeLog('x')).toEqual([]);
    expect(decodeLog(JSON.parse(encodeLog([1000, 1250, 1250, 2000])))).toEqual([1000, 1250, 1250, 2000]);
  });

  it('keeps idle keys only for the bucket TTL', async () => {
    const nc = await connect({ servers: nats.url });
    conns.push(nc);
    await NatsRateLimiter.open(nc, { perSecond: 1, perMinute: 0 }, { bucket: 'rl_ttl' });
    const { Kvm } = await import('@nats-io/kv');
    const status = await (await new Kvm(nc).open('rl_ttl')).status();
    expect(status.ttl).toBe(NatsRateLimiter.TTL_MS);
    expect(status.history).toBe(1);
  });
});
