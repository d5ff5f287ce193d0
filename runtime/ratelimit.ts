/**
 * Per-key rate limits (spec 8): a burst of `perSecond` and `perMinute` in all, each a token
 * bucket; a request needs a token from both. A limit of 0 is off. The port lets processes share
 * buckets (NATS KV) where several API processes serve one address.
 */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the tighter bucket is full again. */
  resetSeconds: number;
  /** Whole seconds to wait before a retry can succeed (when refused). */
  retryAfterSeconds: number;
  policy: string;
}

export interface RateLimiter {
  take(key: string, now?: number): Promise<RateDecision>;
  close?(): Promise<void>;
}

export interface Bucket {
  tokens: number;
  at: number;
}

export interface Limits {
  perSecond: number;
  perMinute: number;
}

interface Rule {
  capacity: number;
  /** tokens per millisecond */
  rate: number;
  window: number;
}

const rulesOf = (l: Limits): Rule[] =>
  [
    { capacity: l.perSecond, rate: l.perSecond / 1000, window: 1 },
    { capacity: l.perMinute, rate: l.perMinute / 60_000, window: 60 },
  ].filter((r) => r.capacity > 0);

/** The pure step shared by every adapter: refill, then take one token from every bucket or none. */
export function step(limits: Limits, buckets: Bucket[] | undefined, now: number): { buckets: Bucket[]; decision: RateDecision } {
  const rules = rulesOf(limits);
  const policy = rules.map((r) => `${r.capacity};w=${r.window}`).join(', ');
  const current = rules.map((r, i) => {
    const b = buckets?.[i];
    if (!b) return { tokens: r.capacity, at: now };
    return { tokens: Math.min(r.capacity, b.tokens + Math.max(0, now - b.at) * r.rate), at: now };
  });
  const allowed = current.every((b) => b.tokens >= 1);
  if (allowed) for (const b of current) b.tokens -= 1;
  let tight = 0;
  current.forEach((b, i) => {
    if (b.tokens / rules[i].capacity < current[tight].tokens / rules[tight].capacity) tight = i;
  });
  const wait = allowed ? 0 : Math.max(...current.map((b, i) => (b.tokens >= 1 ? 0 : (1 - b.tokens) / rules[i].rate)));
  const r = rules[tight];
  const b = current[tight];
  return {
    buckets: current,
    decision: {
      allowed,
      limit: r ? r.capacity : 0,
      remaining: b ? Math.floor(b.tokens) : 0,
      resetSeconds: r && b ? Math.ceil((r.capacity - b.tokens) / r.rate / 1000) : 0,
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(wait / 1000)),
      policy,
    },
  };
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Bucket[]>();
  private lastSweep = 0;

  constructor(private readonly limits: Limits) {}


  async take(key: string, now = Date.now()): Promise<RateDecision> {
    const { buckets, decision } = step(this.limits, this.buckets.get(key), now);
    this.buckets.set(key, buckets);
    if (now - this.lastSweep > 120_000) this.sweep(now);
    return decision;
  }

  /** Buckets idle for two minutes are full again: forget them. */
  private sweep(now: number) {
    this.lastSweep = now;
    for (const [k, b] of this.buckets) if (b.every((x) => now - x.at > 120_000)) this.buckets.delete(k);
  }
}
