import type { RecordedEvent } from '../domain/shared/events.js';
import type { EventLog, Subscription } from '../eventlog/port.js';
import { mayFire } from './catalog.js';

export interface Wakeup {
  promise: Promise<void>;
  cancel(): void;
}

/**
 * Wakes long-polling change-feed readers (decisions.md §10 `wait`): one subscription to the log,
 * from its head at first use, resolves the waiters of an event's team as soon as it is written
 * (the embedded log hands its own commits to followers from memory, so within milliseconds).
 */
export class FeedWaker {
  private readonly waiters = new Map<number, Set<() => void>>();
  private subscription: Subscription | null = null;
  private starting: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly log: EventLog) {}

  /** Resolves once the subscription follows the log: every event written after this wakes its team. */
  ready(): Promise<void> {
    // A failed start is not kept: the next reader tries again.
    return (this.starting ??= this.start().catch((err: unknown) => {
      this.starting = null;
      throw err;
    }));
  }

  private async start(): Promise<void> {
    const head = await this.log.head();
    if (this.closed) return;
    this.subscription = this.log.subscribe(head, (e) => this.wake(e), {
      // A failed subscription only makes waiters wait out their time; the next reader starts one again.
      onError: () => {
        this.subscription = null;
        this.starting = null;
      },
    });
  }

  private wake(e: RecordedEvent): void {
    if (!mayFire(e)) return;
    const set = this.waiters.get(e.metadata.team);
    if (!set) return;
    this.waiters.delete(e.metadata.team);
    for (const resolve of set) resolve();
  }

  /** A promise of the team's next event. */
  next(team: number): Wakeup {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    let set = this.waiters.get(team);
    if (!set) this.waiters.set(team, (set = new Set()));
    set.add(resolve);
    return {
      promise,
      cancel: () => {
        const s = this.waiters.get(team);
        s?.delete(resolve);
        if (s && !s.size) this.waiters.delete(team);
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const set of this.waiters.values()) for (const resolve of set) resolve();
    this.waiters.clear();
    await this.subscription?.stop();
    this.subscription = null;
  }
}
