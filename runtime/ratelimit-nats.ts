import { isConflict } from '../projections/lease-nats.js';
import { type KV, Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { SharedRateLimiter } from './ratelimit-fallback.js';
import { type Limits, monotonicNow, type RateDecision, type ServedLog, step } from './ratelimit.js';
import { openBucket } from '../projections/nats-bucket.js';

export interface NatsRateLimiterOptions {
  /** The KV bucket holding one entry per key. */
  bucket?: string;
  /** Attempts at a compare-and-swap before the request is refused as contended. */
  maxAttempts?: number;
}

/**
 * A served log as stored: the first time, then each later one as its distance from the one before
 * (600 entries stay a few KB). Anything else, such as an entry written by the token-bucket limiter
 * of an earlier version, reads as an empty log.
 */
export const encodeLog = (log: ServedLog): string => JSON.stringify(log.map((t, i) => (i ? t - log[i - 1] : t)));

export function decodeLog(data: unknown): ServedLog {
  if (!Array.isArray(data) || !data.every((x) => typeof x === 'number' && Number.isFinite(x))) return [];
  const log: ServedLog = [];
  for (const [i, d] of (data as number[]).entries()) log.push(i ? log[i - 1] + d : d);
  return log;
}

/**
 * Per-key served logs shared by every API process through a NATS KV bucket (spec 8: the limit is
 * per key, whichever process serves the request). Each take reads the key's entry, runs the same
 * pure `step` as the memory adapter and writes the result back only if the entry is still at the
 * revision it read (compare-and-swap); on a conflict another process served a request meanwhile,
 * so it reads again and retries. A refused request writes nothing.
 *
 * The bucket's TTL drops entries not written for longer than the longest window (a minute), whose
 * logs can only hold times outside every window; idle keys cost nothing.
 */
export class NatsRateLimiter implements SharedRateLimiter {
  private constructor(
    private readonly kv: KV,
    private readonly limits: Limits,
    private readonly maxAttempts: number,
  ) {}

  /** Longer than the longest window, so a log is never dropped while it still counts. */
  static readonly TTL_MS = 90_000;

  /** The connection is the process's own, shared and closed by its owner (api/scale.ts). */
  static async open(nc: NatsConnection, limits: Limits, options: NatsRateLimiterOptions = {}): Promise<NatsRateLimiter> {
    // API processes starting together each open it: openBucket takes the one another just made.
    const kv = await openBucket(new Kvm(nc), options.bucket ?? 'turnout_ratelimit', {
      history: 1,
      ttl: NatsRateLimiter.TTL_MS,
      description: 'Turnout per-key rate limits: the times each key was served in the last minute',
    });
    return new NatsRateLimiter(kv, limits, options.maxAttempts ?? 25);
  }

  /** Reads a key nobody writes: the bucket answers, or this throws (ratelimit-fallback.ts). */
  async probe(): Promise<void> {
    await this.kv.get('probe');
  }

  async take(key: string, now?: number): Promise<RateDecision> {
    // Keys may only hold [-/_=.a-zA-Z0-9]; base64url fits and cannot collide.
    const k = Buffer.from(key).toString('base64url');
    let last: RateDecision | null = null;
    for (let attempt = 0; attempt < this.maxAttempts; attempt++) {
      const entry = await this.kv.get(k);
      const live = entry && entry.operation === 'PUT' && entry.length > 0;
      const current = live ? decodeLog(safeJson(entry.string())) : undefined;
      const { log, decision } = step(this.limits, current, now ?? monotonicNow());
      if (!decision.allowed) return decision;
      last = decision;
      const data = encodeLog(log);
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
    // serve a request that was not logged.
    return { ...(last as RateDecision), allowed: false, remaining: 0, retryAfterSeconds: 1 };
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
