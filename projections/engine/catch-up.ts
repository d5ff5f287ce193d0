import type { Position } from '../../domain/shared/events.js';
import type { FollowerStatus } from '../../eventlog/follower.js';
import type { EventLog } from '../../eventlog/port.js';
import type { ReadStore } from '../store/port.js';
import { waitForCheckpoint } from './checkpoint-wait.js';

/**
 * Whether this process's read models have caught up with the log as it stood when they began
 * following it (decisions.md §1: "catching up" after start). Requests that read them wait on it
 * (api/read-gate.ts); the background roles start once it resolves.
 */
export class StartCatchUp {
  private caughtUp = false;
  private stopped = false;
  private resolve!: () => void;
  private readonly reached = new Promise<void>((resolve) => (this.resolve = resolve));

  /** Null once caught up (the common case, answered without a promise), else the promise of it. */
  pending(): Promise<void> | null {
    return this.caughtUp ? null : this.reached;
  }

  /** Nothing to catch up here (no read models in this process, or they are another's). */
  skip(): void {
    this.done();
  }

  /**
   * Waits until `waitFor` has passed the log's current head. waitFor gives up after a write's
   * time-out, while a catch-up of a long log takes longer: it is asked again until it passes.
   */
  async follow(log: EventLog, waitFor: (position: Position) => Promise<void>): Promise<void> {
    const head = await log.head();
    while (head && !this.stopped) {
      try {
        await waitFor(head);
        break;
      } catch {
        // Not yet: ask again.
      }
    }
    if (!this.stopped) this.done();
  }

  /**
   * For a process whose read models another process keeps (a shared MongoDB store, read or
   * stood by for): waits until the build's summary checkpoint (builds.ts) passes the log's head,
   * so that a process of a new build is not ready while its versions are being built.
   */
  followShared(log: EventLog, store: ReadStore, summary: string): Promise<void> {
    return this.follow(log, (p) => waitForCheckpoint(store, p, summary));
  }

  /** The shared read models as a follower of /readyz: catching up until followShared has passed. */
  status(): FollowerStatus {
    return { name: 'read-models', state: this.caughtUp ? 'caught_up' : 'catching_up', behind: null };
  }

  stop(): void {
    this.stopped = true;
  }

  private done(): void {
    this.caughtUp = true;
    this.resolve();
  }
}
