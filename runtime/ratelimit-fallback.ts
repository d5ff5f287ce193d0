import type { FollowerStatus } from '../eventlog/follower.js';
import { type Limits, MemoryRateLimiter, type RateDecision, type RateLimiter } from './ratelimit.js';

/** A shared limiter that can also say whether its store answers, without serving anything. */
export interface SharedRateLimiter extends RateLimiter {
  probe(): Promise<void>;
}

export interface FallbackOptions {
  /** How long a request waits for the shared store before it is counted here instead (100 ms). */
  timeoutMs?: number;
  /** How often the shared store is asked again while it is away. */
  probeEveryMs?: number;
  /** Told once when the limits fall back to this process's count, and once when they return. */
  report?: (message: string) => void;
  /** False while the store's connection is known to be down: the limits fall back without waiting. */
  connected?: () => boolean;
  /** Time-outs in a row (the connection up) after which the store counts as away. */
  slowInARow?: number;
}

/**
 * Per-key limits from a shared store (NATS KV) that survive the store (decisions.md §1): a request
 * never waits more than `timeoutMs` on it. A request past that is counted here (its shared take
 * goes on and is logged there when it lands); an error, a connection known to be down, or a few
 * time-outs in a row that a probe confirms make the limits fall back to this process's own count
 * until a probe finds the store answering again. Meanwhile every request is counted here at once, so an outage costs a
 * few slow requests, not every request's time-out; and one slow answer on a busy host does not
 * split the limits between processes.
 * Readiness reports the fallback as the `rate-limits` follower reconnecting (degraded, not down:
 * the API still answers correctly, each process enforcing the limits on its own traffic).
 */
export class FallbackRateLimiter implements RateLimiter {
  private readonly local: MemoryRateLimiter;
  private away = false;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly timeoutMs: number;
  private readonly probeEveryMs: number;
  private readonly report: (message: string) => void;
  private readonly connected: () => boolean;
  private readonly slowInARow: number;
  private slow = 0;
  private confirming = false;

  constructor(
    private readonly shared: SharedRateLimiter,
    limits: Limits,
    options: FallbackOptions = {},
  ) {
    this.local = new MemoryRateLimiter(limits);
    this.timeoutMs = options.timeoutMs ?? 100;
    this.probeEveryMs = options.probeEveryMs ?? 1_000;
    this.report = options.report ?? ((m) => console.warn(m));
    this.connected = options.connected ?? (() => true);
    this.slowInARow = options.slowInARow ?? 3;
  }

  /** True while the limits are counted by this process alone. */
  get fallenBack(): boolean {
    return this.away;
  }

  status(): FollowerStatus {
    return { name: 'rate-limits', state: this.away ? 'reconnecting' : 'caught_up', behind: null };
  }

  async take(key: string, now?: number): Promise<RateDecision> {
    if (!this.away && !this.connected()) this.fallBack(new Error('the connection is down'));
    if (this.away) return this.local.take(key, now);
    const answer = await within(this.shared.take(key, now), this.timeoutMs);
    if (answer.ok) {
      this.slow = 0;
      return answer.value;
    }
    if (answer.error !== TIMED_OUT) this.fallBack(answer.error);
    else if (++this.slow >= this.slowInARow) this.confirmAway();
    return this.local.take(key, now);
  }

  /**
   * Slow answers in a row: contention (many racing requests on one key retry their
   * compare-and-swap) or an unreachable store. A probe, which contends with nobody, tells which.
   */
  private confirmAway(): void {
    if (this.confirming || this.away) return;
    this.confirming = true;
    void this.probe().then((answer) => {
      this.confirming = false;
      if (answer.ok) this.slow = 0;
      else this.fallBack(TIMED_OUT);
    });
  }

  private fallBack(cause: unknown): void {
    if (this.away || this.closed) return;
    this.away = true;
    this.slow = 0;
    const why = cause === TIMED_OUT ? `no answer within ${this.timeoutMs} ms ${this.slowInARow} times in a row, nor to a probe` : cause instanceof Error ? cause.message : String(cause);
    this.report(`rate limits: the shared store is unreachable (${why}); each process counts its own requests until it answers`);
    this.scheduleProbe();
  }

  /** A probe may take longer than a request may wait: it holds no request up. */
  private probe() {
    return within(this.shared.probe(), Math.max(this.probeEveryMs, this.timeoutMs));
  }

  private scheduleProbe(): void {
    if (this.closed) return;
    this.timer = setTimeout(async () => {
      const answer = await this.probe();
      if (this.closed) return;
      if (!answer.ok || !this.connected()) return this.scheduleProbe();
      this.away = false;
      this.report('rate limits: the shared store answers again; limits are shared again');
    }, this.probeEveryMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.shared.close?.();
  }
}

const TIMED_OUT = Symbol('timed out');

/** The promise's outcome, or TIMED_OUT after `ms`; a late rejection is swallowed, never unhandled. */
async function within<T>(p: Promise<T>, ms: number): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<{ ok: false; error: unknown }>((resolve) => (timer = setTimeout(() => resolve({ ok: false, error: TIMED_OUT }), ms)));
  try {
    return await Promise.race([
      p.then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
