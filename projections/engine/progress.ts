import type { FollowerStatus } from '../../eventlog/follower.js';

/** How far a catch-up or rebuild has come, told every few seconds (log lines, /readyz, a CLI). */
export interface CatchUpProgress {
  /** Events read since the catch-up began. */
  done: number;
  /** Events to read in all, as far as the log's head has run meanwhile. */
  total: number;
  /** Events per second since the catch-up began. */
  rate: number;
  /** Seconds left at that rate; null before there is one. */
  etaSeconds: number | null;
}

/** Counts a catch-up's events and answers its progress at most once per `everyMs`. */
export class ProgressMeter {
  private readonly startedAt = Date.now();
  private lastTold = Date.now();
  private done = 0;

  constructor(
    private total: number,
    private readonly everyMs: number,
  ) {}

  /** Adds the events of a step; `behind` is what is left after it. A progress when one is due, else null. */
  add(events: number, behind: number): CatchUpProgress | null {
    this.done += events;
    this.total = Math.max(this.total, this.done + behind);
    if (Date.now() - this.lastTold < this.everyMs) return null;
    this.lastTold = Date.now();
    return this.now(behind);
  }

  now(behind: number): CatchUpProgress {
    const seconds = (Date.now() - this.startedAt) / 1000;
    const rate = seconds > 0 ? this.done / seconds : 0;
    return { done: this.done, total: this.total, rate: Math.round(rate), etaSeconds: rate > 0 ? Math.round(behind / rate) : null };
  }
}


export interface ProgressOptions {
  /** Every follower this process runs (services.followers). */
  followers: () => Promise<FollowerStatus[]>;
  report: (line: string) => void;
  intervalMs?: number;
  now?: () => number;
  /** True once nothing more will start catching up (the process has started): the watch then ends when all have caught up. */
  settled?: () => boolean;
}

interface Track {
  since: number;
  /** Events behind at the first look: the distance to cover. */
  firstBehind: number;
  done: number;
  told: boolean;
}

const count = (n: number) => Math.round(n).toLocaleString('en-US');

function duration(s: number): string {
  if (!Number.isFinite(s)) return '?';
  if (s < 90) return `${Math.max(1, Math.round(s))} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

/**
 * Logs how far each follower that is catching up (after a start, or rebuilding a read model) has
 * come, every `intervalMs` (5 s): `read-models: catching up 120,000/1,100,000 events (48,000/s,
 * ETA 20 s)`, then one line once it has caught up. It asks the followers' status, which counts
 * the events behind, once per interval, never per event. A follower that catches up within the
 * first interval is not mentioned. The watch ends once every follower has caught up.
 */
export function watchProgress(options: ProgressOptions): { stop(): void; sample(): Promise<void> } {
  const now = options.now ?? (() => performance.now());
  const tracks = new Map<string, Track>();
  let inflight: Promise<void> | null = null;
  /** One look at a time: a look asked for while one runs is that one. */
  const sample = () =>
    (inflight ??= (async () => {
      try {
        const followers = await options.followers().catch(() => [] as FollowerStatus[]);
        const t = now();
        for (const f of followers) look(f, t);
        if ((options.settled?.() ?? true) && followers.every((f) => f.state === 'caught_up')) stop();
      } finally {
        inflight = null;
      }
    })());
  const look = (f: FollowerStatus, t: number) => {
    let track = tracks.get(f.name);
    if (f.state === 'caught_up') {
      if (track?.told) {
        const seconds = (t - track.since) / 1000;
        const total = Math.max(track.firstBehind, track.done);
        options.report(`${f.name}: caught up, ${count(total)} events in ${duration(seconds)} (${count(total / Math.max(seconds, 0.001))}/s)`);
      }
      tracks.delete(f.name);
      return;
    }
    if (f.state !== 'catching_up' || f.behind === null) return;
    if (!track) {
      tracks.set(f.name, { since: t, firstBehind: f.behind, done: 0, told: false });
      return;
    }
    // The log may grow meanwhile: what is done is what the distance has shrunk by, never less than before.
    track.done = Math.max(track.done, track.firstBehind - f.behind);
    const seconds = (t - track.since) / 1000;
    const rate = seconds > 0 ? track.done / seconds : 0;
    const eta = rate > 0 ? duration(f.behind / rate) : '?';
    options.report(`${f.name}: catching up ${count(track.done)}/${count(track.done + f.behind)} events (${count(rate)}/s, ETA ${eta})`);
    track.told = true;
  };
  const timer = setInterval(() => void sample(), options.intervalMs ?? 5_000);
  timer.unref();
  const stop = () => clearInterval(timer);
  void sample();
  return { stop, sample };
}
