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
