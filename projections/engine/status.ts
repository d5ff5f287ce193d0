import { comparePositions, type Position } from '../../domain/shared/events.js';
import type { FollowerStatus } from '../../eventlog/follower.js';
import type { CatchUpProgress } from './progress.js';

/**
 * What every driver of the engine answers, wherever it runs (the main thread, a thread of its
 * own): read-your-writes, readiness and catch-up progress, so that wiring and /readyz ask the
 * same questions of each.
 */
export interface ReadModelsDriver {
  /** Resolves once every event up to `position` is applied; rejects after the driver's time-out. */
  waitFor(position: Position): Promise<void>;
  /** The follower's readiness (decisions.md §1): caught up once it first reached the head. */
  status(): Promise<FollowerStatus>;
  /** The catch-up progress last told while one runs; null once caught up (or never told). */
  progress(): CatchUpProgress | null;
  stop(): Promise<void>;
}

/**
 * A wait for the read models (read-your-writes) that gave up: what was written up to `position`
 * is in the log, and not readable yet. A write answers it as 503 write_pending (api/errors.ts).
 */
export class NotYetReadable extends Error {
  constructor(
    readonly position: Position,
    timeoutMs: number,
  ) {
    super(`read models did not reach position ${position.commit} within ${timeoutMs} ms`);
    this.name = 'NotYetReadable';
  }
}

/**
 * The position a driver's read models have reached, and the writers waiting for a later one.
 * A waiter gives up after `timeoutMs`: a write then answers with an error instead of hanging.
 * Every write on the embedded files waits here a moment (its commit is told to the projector
 * thread as it is answered), so the waiters share one timer, not one each: they all wait the same
 * time, so the first still waiting is always the first to give up.
 */
export class PositionWaiters {
  private reached: Position | null = null;
  private waiters: Array<{ position: Position; deadline: number; resolve: () => void; reject: (err: Error) => void }> = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly timeoutMs: number) {}

  get position(): Position | null {
    return this.reached;
  }

  /** Whether every event up to `position` is applied. */
  passed(position: Position): boolean {
    return this.reached !== null && comparePositions(position, this.reached) <= 0;
  }

  /** Moves the position on (never back) and wakes the writers it covers. False when it did not move. */
  reach(position: Position): boolean {
    if (this.passed(position)) return false;
    this.reached = position;
    if (this.waiters.length) {
      const still: typeof this.waiters = [];
      for (const w of this.waiters) (comparePositions(w.position, position) <= 0 ? w.resolve() : still.push(w));
      this.waiters = still;
      if (still.length === 0) this.disarm();
    }
    return true;
  }

  /** Resolves once `position` is reached. */
  wait(position: Position): Promise<void> {
    if (this.passed(position)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ position, deadline: Date.now() + this.timeoutMs, resolve, reject });
      // Unref'd: a waiter is a request's (whose socket keeps the process up) or a background wait, which must not hold a closing process up.
      this.timer ??= setTimeout(() => this.expire(), this.timeoutMs).unref();
    });
  }

  /** Nothing will reach any waited position any more: every waiter fails with `err` now, not at its time-out. */
  failAll(err: Error): void {
    this.disarm();
    for (const w of this.waiters.splice(0)) w.reject(err);
  }

  /** Fails the waiters whose time is up, oldest first, and arms the timer for the next one. */
  private expire(): void {
    this.timer = null;
    const now = Date.now();
    let n = 0;
    while (n < this.waiters.length && this.waiters[n].deadline <= now) n++;
    for (const w of this.waiters.splice(0, n)) w.reject(new NotYetReadable(w.position, this.timeoutMs));
    if (this.waiters.length) this.timer = setTimeout(() => this.expire(), Math.max(1, this.waiters[0].deadline - now)).unref();
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
