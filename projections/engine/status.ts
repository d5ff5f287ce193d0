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
 * The position a driver's read models have reached, and the writers waiting for a later one.
 * A waiter gives up after `timeoutMs`: a write then answers with an error instead of hanging.
 */
export class PositionWaiters {
  private reached: Position | null = null;
  private waiters: Array<{ position: Position; resolve: () => void; reject: (err: Error) => void }> = [];

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
    }
    return true;
  }

  /** Resolves once `position` is reached. */
  wait(position: Position): Promise<void> {
    if (this.passed(position)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done);
        reject(new Error(`read models did not reach position ${position.commit} within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const fail = (err: Error) => {
        clearTimeout(timer);
        reject(err);
      };
      this.waiters.push({ position, resolve: done, reject: fail });
    });
  }

  /** Nothing will reach any waited position any more: every waiter fails with `err` now, not at its time-out. */
  failAll(err: Error): void {
    for (const w of this.waiters.splice(0)) w.reject(err);
  }
}
