/**
 * Per-key rate limits (spec 8, decisions.md §4): in any rolling second a key is served at most
 * `perSecond` requests, in any rolling minute at most `perMinute`. A token bucket cannot promise
 * that (its stored burst plus its refill let 29 through in a second and 914 in a minute), so each
 * key keeps a log of the times it was served within the longest window: a request is served only
 * if fewer than the limit were served in the window ending now, for every window. A limit of 0 is
 * off. The port lets processes share logs (NATS KV) where several API processes serve one address.
 */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the reported window has its whole quota again. */
  resetSeconds: number;
  /** Whole seconds to wait before a retry can succeed (when refused). */
  retryAfterSeconds: number;
  policy: string;
}

export interface RateLimiter {
  take(key: string, now?: number): Promise<RateDecision>;
  close?(): Promise<void>;
}

/** Times (ms) a key was served within the longest window, oldest first. */
export type ServedLog = number[];

export interface Limits {
  perSecond: number;
  perMinute: number;
}

interface Window {
  limit: number;
  ms: number;
  seconds: number;
}

interface Shape {
  windows: Window[];
  policy: string;
  longest: number;
}

/**
 * A limiter's limits never change, but step runs on every request: their windows, policy header
 * and longest window are worked out once per Limits object rather than on each call.
 */
const shapes = new WeakMap<Limits, Shape>();
function shapeOf(l: Limits): Shape {
  let shape = shapes.get(l);
  if (!shape) {
    const windows = [
      { limit: l.perSecond, ms: 1000, seconds: 1 },
      { limit: l.perMinute, ms: 60_000, seconds: 60 },
    ].filter((w) => w.limit > 0);
    shape = { windows, policy: windows.map((w) => `${w.limit};w=${w.seconds}`).join(', '), longest: Math.max(0, ...windows.map((w) => w.ms)) };
    shapes.set(l, shape);
  }
  return shape;
}

/** The longest window of these limits (ms), for how long a log must be kept. */
export const longestWindowMs = (l: Limits) => shapeOf(l).longest;

/**
 * Now in whole milliseconds since the epoch, by a clock that never goes back: the wall clock as
 * it read when the process started, moved on by the monotonic one. A wall clock stepped back
 * (NTP) would otherwise let a window's requests out early. Processes sharing logs agree to within
 * their clocks' offset at start.
 */
export const monotonicNow = (): number => Math.floor(performance.timeOrigin + performance.now());

/**
 * The pure step shared by every adapter. A request at `now` is served if, in each window, fewer
 * than its limit were served at or after `now - window`: both ends count, since times are whole
 * milliseconds (two requests logged 1000 ms apart may be 999.x ms apart in fact), so that no real
 * span of the window's length ever holds more than the limit.
 * A refused request is not logged (it was not served).
 */
export function step(limits: Limits, log: ServedLog | undefined, now: number): { log: ServedLog; decision: RateDecision } {
  const { windows, policy, longest } = shapeOf(limits);
  if (!windows.length) return { log: [], decision: { allowed: true, limit: 0, remaining: 0, resetSeconds: 0, retryAfterSeconds: 0, policy } };
  // Sorted: logs shared between processes may carry times from clocks a little apart.
  const kept = (log ?? []).filter((t) => t >= now - longest).sort((a, b) => a - b);
  const inWindow = windows.map((w) => kept.filter((t) => t >= now - w.ms));
  const allowed = inWindow.every((served, i) => served.length < windows[i].limit);
  const after = allowed ? [...kept, now].sort((a, b) => a - b) : kept;
  const counts = windows.map((w) => after.filter((t) => t >= now - w.ms));
  // Report the window closest to its limit (the tighter one); on a tie, the shorter.
  let tight = 0;
  counts.forEach((served, i) => {
    if (windows[i].limit - served.length < windows[tight].limit - counts[tight].length) tight = i;
  });
  const w = windows[tight];
  const served = counts[tight];
  // A slot frees when the oldest request in a full window leaves it (a millisecond past the
  // window's end, which counts); a refused request waits for every full window.
  const wait = allowed ? 0 : Math.max(...inWindow.map((s, i) => (s.length < windows[i].limit ? 0 : s[s.length - windows[i].limit] + windows[i].ms + 1 - now)));
  return {
    log: after,
    decision: {
      allowed,
      limit: w.limit,
      remaining: Math.max(0, w.limit - served.length),
      resetSeconds: served.length ? Math.ceil((served[served.length - 1] + w.ms - now) / 1000) : 0,
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(wait / 1000)),
      policy,
    },
  };
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly logs = new Map<string, ServedLog>();
  private lastSweep = 0;

  constructor(private readonly limits: Limits) {}

  async take(key: string, now = monotonicNow()): Promise<RateDecision> {
    const { log, decision } = step(this.limits, this.logs.get(key), now);
    this.logs.set(key, log);
    if (now - this.lastSweep > 120_000) this.sweep(now);
    return decision;
  }

  /** Logs with nothing in the longest window say nothing: forget them. */
  private sweep(now: number) {
    this.lastSweep = now;
    const longest = longestWindowMs(this.limits);
    for (const [k, log] of this.logs) if (!log.length || log[log.length - 1] < now - longest) this.logs.delete(k);
  }
}
