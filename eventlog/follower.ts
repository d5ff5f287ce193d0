import { comparePositions, type Position, type RecordedEvent } from '../domain/shared/events.js';
import { Backoff, DEFAULT_RETRY } from './backoff.js';
import { Pause } from './pause.js';
import type { EventLog, SubscribeOptions, Subscription } from './port.js';

/** A follower's readiness (decisions.md §1). */
export type FollowerState = 'catching_up' | 'caught_up' | 'reconnecting' | 'failed';

export interface FollowerStatus {
  name: string;
  state: FollowerState;
  /** Events after the follower's position, where the log can count them cheaply; else null. */
  behind: number | null;
}

export interface LogFollowerOptions {
  name: string;
  log: EventLog;
  /** Gets a (re)subscription ready and answers where it starts: the last stored checkpoint. */
  resume: () => Promise<Position | null>;
  handle: (event: RecordedEvent) => Promise<void> | void;
  onCheckpoint?: (position: Position) => Promise<void> | void;
  filter?: SubscribeOptions['filter'];
  /** Where each lost connection and resubscription attempt is told (a logger). */
  report?: (message: string) => void;
  /** The wait before resubscribing, doubling per failed attempt up to the longest (backoff.ts). */
  retryInitialMs?: number;
  retryMaxMs?: number;
}

/**
 * Follows the log and heals itself: after an infrastructure error it resubscribes from the last
 * stored checkpoint, with capped backoff, forever, reporting each attempt. It also keeps the
 * follower's readiness: catching up until it first reaches the head the log had at start, then
 * caught up (ordinary lag never undoes that), reconnecting while its subscription is lost, and
 * failed while its owner says an event cannot be applied.
 */
export class LogFollower {
  private subscription: Subscription | null = null;
  private position: Position | null = null;
  private target: Position | null = null;
  private reachedHead = false;
  private reconnecting = false;
  private failing = false;
  private stopped = false;
  /** Counts subscriptions, so that a late error from one already replaced is ignored. */
  private generation = 0;
  private resubscribing = false;
  private healing: Promise<void> = Promise.resolve();
  private readonly retry: Backoff;
  private readonly backoff = new Pause();

  constructor(private readonly options: LogFollowerOptions) {
    this.retry = new Backoff({ initialMs: options.retryInitialMs ?? DEFAULT_RETRY.initialMs, maxMs: options.retryMaxMs ?? DEFAULT_RETRY.maxMs });
  }

  /** The first subscription; its errors are the caller's (a process that cannot start says so). */
  async start(): Promise<void> {
    this.stopped = false;
    this.resubscribing = false;
    this.target = await this.options.log.head();
    this.reachedHead = this.target === null;
    const from = await this.options.resume();
    // Stopped while it asked (its owner resubscribes from elsewhere, or stops): it never subscribes.
    if (this.stopped) return;
    this.open(from);
  }

  /** Set by the owner while an event keeps failing to apply (it retries it), cleared once it succeeds. */
  setFailing(failing: boolean): void {
    this.failing = failing;
  }

  state(): FollowerState {
    if (this.failing) return 'failed';
    if (this.reconnecting) return 'reconnecting';
    return this.reachedHead ? 'caught_up' : 'catching_up';
  }

  async status(): Promise<FollowerStatus> {
    const count = this.options.log.countAfter;
    const behind = count ? await count.call(this.options.log, this.position).catch(() => null) : null;
    return { name: this.options.name, state: this.state(), behind };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.backoff.wake();
    await this.healing;
    const s = this.subscription;
    this.subscription = null;
    await s?.stop();
  }

  private open(from: Position | null): void {
    this.position = from;
    if (from) this.passed(from);
    const { log, handle, onCheckpoint, filter, name } = this.options;
    const generation = ++this.generation;
    this.subscription = log.subscribe(
      from,
      async (e) => {
        await handle(e);
        this.passed(e.position);
      },
      {
        filter,
        onCheckpoint: async (p) => {
          await onCheckpoint?.(p);
          this.passed(p);
        },
        onDropped: (err) => {
          this.reconnecting = true;
          this.report(`${name}: lost the log (${describe(err)}); resubscribing`);
        },
        onResubscribed: () => {
          this.reconnecting = false;
          this.report(`${name}: following the log again`);
        },
        // Some adapters report one failure twice (from the read and from the loop's end): heal once.
        onError: (err) => {
          if (generation !== this.generation || this.resubscribing) return;
          this.resubscribing = true;
          this.healing = this.resubscribe(err);
        },
      },
    );
  }

  private passed(position: Position): void {
    this.position = position;
    this.retry.reset();
    this.reconnecting = false;
    if (!this.reachedHead && this.target && comparePositions(position, this.target) >= 0) this.reachedHead = true;
  }

  private async resubscribe(error: unknown): Promise<void> {
    this.reconnecting = true;
    // The error may come while subscribe() has not returned yet: let open() finish first.
    await null;
    const failed = this.subscription;
    this.subscription = null;
    await failed?.stop().catch(() => undefined);
    let cause = error;
    for (let attempt = 1; !this.stopped; attempt++) {
      const wait = this.retry.next();
      this.report(`${this.options.name}: ${describe(cause)}; resubscribing from the last checkpoint in ${wait} ms (attempt ${attempt})`);
      await this.backoff.for(wait);
      if (this.stopped) return;
      try {
        const from = await this.options.resume();
        if (this.stopped) return;
        this.resubscribing = false;
        this.reconnecting = false;
        this.open(from);
        return;
      } catch (err) {
        cause = err;
      }
    }
  }

  private report(message: string): void {
    this.options.report?.(message);
  }

}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
