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
  /** Optional: take() answered at once, by a limiter that decides in this process without waiting on anything. */
  takeNow?(key: string, now?: number): RateDecision;
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

/** The first index from `lo` on whose time is at or after `at`, in times sorted oldest first. */
function firstAtOrAfter(times: number[], lo: number, at: number): number {
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (times[mid] < at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A key's served times, oldest first; those before `start` have left the longest window. */
interface Served {
  times: number[];
  start: number;
}

/**
 * One process's logs. The clock it reads never goes back, so each log stays sorted and a request
 * is decided by binary searches over it, with the time appended in place: what `step` decides,
 * without its copies, filters and sorts of a log that holds up to a minute's quota (600 times by
 * default) on every request. A time earlier than the log's last (only a caller passing `now`
 * can give one) takes `step` itself.
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly logs = new Map<string, Served>();
  private lastSweep = 0;

  constructor(private readonly limits: Limits) {}

  async take(key: string, now = monotonicNow()): Promise<RateDecision> {
    return this.takeNow(key, now);
  }

  /** take(), answered without a promise: the edge's hook then needs none for a request within its limits. */
  takeNow(key: string, now = monotonicNow()): RateDecision {
    const decision = this.decide(key, now);
    if (now - this.lastSweep > 120_000) this.sweep(now);
    return decision;
  }

  private decide(key: string, now: number): RateDecision {
    const { windows, policy, longest } = shapeOf(this.limits);
    let log = this.logs.get(key);
    if (!windows.length || (log && log.times.length > log.start && now < log.times[log.times.length - 1])) {
      const r = step(this.limits, log?.times.slice(log.start), now);
      this.logs.set(key, { times: r.log, start: 0 });
      return r.decision;
    }
    if (!log) this.logs.set(key, (log = { times: [], start: 0 }));
    const times = log.times;
    log.start = firstAtOrAfter(times, log.start, now - longest);
    const n = times.length;
    // Each window's times are the log's tail from its first time inside it.
    let allowed = true;
    const before: number[] = [];
    for (const w of windows) {
      const count = n - firstAtOrAfter(times, log.start, now - w.ms);
      before.push(count);
      if (count >= w.limit) allowed = false;
    }
    if (allowed) times.push(now);
    const added = allowed ? 1 : 0;
    let tight = 0;
    for (let i = 1; i < windows.length; i++) if (windows[i].limit - (before[i] + added) < windows[tight].limit - (before[tight] + added)) tight = i;
    const w = windows[tight];
    const served = before[tight] + added;
    let wait = 0;
    if (!allowed) for (let i = 0; i < windows.length; i++) if (before[i] >= windows[i].limit) wait = Math.max(wait, times[n - windows[i].limit] + windows[i].ms + 1 - now);
    if (log.start > 64 && log.start * 2 > times.length) {
      times.splice(0, log.start);
      log.start = 0;
    }
    return {
      allowed,
      limit: w.limit,
      remaining: Math.max(0, w.limit - served),
      resetSeconds: served ? Math.ceil((times[times.length - 1] + w.ms - now) / 1000) : 0,
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(wait / 1000)),
      policy,
    };
  }

  /** Logs with nothing in the longest window say nothing: forget them. */
  private sweep(now: number) {
    this.lastSweep = now;
    const longest = longestWindowMs(this.limits);
    for (const [k, log] of this.logs) if (log.times.length === log.start || log.times[log.times.length - 1] < now - longest) this.logs.delete(k);
  }
}
