import { isConflict } from '../projections/lease-nats.js';
import { type KV, Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { type Bucket, type Limits, type RateDecision, type RateLimiter, step } from './ratelimit.js';

export interface NatsRateLimiterOptions {
  /** The KV bucket holding one entry per key. */
  bucket?: string;
  /** Attempts at a compare-and-swap before the request is refused as contended. */
  maxAttempts?: number;
}

/**
 * Per-key token buckets shared by every API process through a NATS KV bucket (spec 8: the limit is
 * per key, whichever process serves the request). Each take reads the key's entry, runs the same
 * pure `step` as the memory adapter and writes the result back only if the entry is still at the
 * revision it read (compare-and-swap); on a conflict another process took a token meanwhile, so it
 * reads again and retries. A refused request writes nothing: the refill is recomputed from `at`.
 *
 * The bucket's TTL drops keys idle longer than it takes every bucket to refill completely (a
 * minute for the per-minute limit), so idle keys cost nothing and come back full, as they would.
 */
export class NatsRateLimiter implements RateLimiter {
  private constructor(
    private readonly kv: KV,
    private readonly limits: Limits,
    private readonly maxAttempts: number,
  ) {}

  /** Idle keys are full again after a minute; keep them a little longer than that. */
  static readonly TTL_MS = 90_000;

  /** The connection is the process's own, shared and closed by its owner (api/scale.ts). */
  static async open(nc: NatsConnection, limits: Limits, options: NatsRateLimiterOptions = {}): Promise<NatsRateLimiter> {
    const kv = await new Kvm(nc).create(options.bucket ?? 'turnout_ratelimit', {
      history: 1,
      ttl: NatsRateLimiter.TTL_MS,
      description: 'Turnout per-key rate limit buckets',
    });
    return new NatsRateLimiter(kv, limits, options.maxAttempts ?? 25);
  }

  async take(key: string, now?: number): Promise<RateDecision> {
    // Keys may only hold [-/_=.a-zA-Z0-9]; base64url fits and cannot collide.
    const k = Buffer.from(key).toString('base64url');
    let last: RateDecision | null = null;
    for (let attempt = 0; attempt < this.maxAttempts; attempt++) {
      const entry = await this.kv.get(k);
      const live = entry && entry.operation === 'PUT' && entry.length > 0;
      const current = live ? entry.json<Bucket[]>() : undefined;
      const { buckets, decision } = step(this.limits, current, now ?? Date.now());
      if (!decision.allowed) return decision;
      last = decision;
      const data = JSON.stringify(buckets);
      try {
        // A missing or deleted entry is created (create also takes over a delete marker);
        // otherwise the write must land on the revision read.
        if (live) await this.kv.update(k, data, entry.revision);
        else await this.kv.create(k, data);
        return decision;
      } catch (err) {
        if (!isConflict(err)) throw err;
        // Another process wrote first; spread the retries so they do not collide again.
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(2 ** attempt, 20)));
      }
    }
    // Only reached under a storm of concurrent requests for this one key: refuse rather than
    // let a request through without a token.
    return { ...(last as RateDecision), allowed: false, remaining: 0, retryAfterSeconds: 1 };
  }
}
