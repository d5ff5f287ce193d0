import { backoffDelay } from '../eventlog/backoff.js';

/**
 * One projector instance writes a shared read store at a time. Two writers would not corrupt it
 * (projectors are idempotent and guard on stream revision), but they would double the load and
 * race on the checkpoint, so projector processes elect a holder through a lease with an expiry
 * (NATS KV: the server's clock; MongoDB: the holder's, docs/production.md gives the skew bound);
 * the others stand by and take over when it lapses.
 *
 * Embedded read models live in each process's memory, so every process projects its own and
 * needs no lease.
 */
export interface Lease {
  /** How long a taken or renewed lease lasts without renewal. */
  readonly ttlMs: number;
  /** Takes the lease if it is free or lapsed, renews it if this holder has it; true while held. */
  acquire(): Promise<boolean>;
  /** Gives the lease up at once, if this holder has it. */
  release(): Promise<void>;
}

/** What the keeper starts while it holds the lease and stops when it loses it. */
export interface LeasedWork {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface LeaseKeeperOptions {
  onChange?: (held: boolean) => void;
  onError?: (error: unknown) => void;
  /** After a failed start: the first wait before trying again, doubling up to the longest. */
  retryInitialMs?: number;
  retryMaxMs?: number;
}

/**
 * Renews the lease every third of its TTL, on a timer of its own, and runs the work only while it
 * holds it. Renewal never waits for the work: a start longer than the TTL (a dispatcher or
 * projector catching up) used to let the lease lapse mid-start and a standby take it, so two
 * holders ran. A renewal that fails, or takes longer than a third of the TTL, stops the
 * work at once (a start in progress is stopped as soon as it ends, before the work is marked
 * running): the holder gives up at most two thirds into the TTL, before any standby can take over.
 * A start that fails gives the lease back (a standby may do better) and is tried again after a
 * capped backoff. Starts and stops of the work run one at a time, in order.
 */
export class LeaseKeeper {
  private timer: NodeJS.Timeout | null = null;
  /** The work started and not stopped since. */
  private running = false;
  /** The last renewal succeeded: the work may run. */
  private holding = false;
  private starting = false;
  private stopped = false;
  private renewing: Promise<void> = Promise.resolve();
  private working: Promise<void> = Promise.resolve();
  private failedStarts = 0;
  /** The last renewal failed or came too late: the store is away, so ask again soon, not a third of the TTL later. */
  private storeAway = false;

  constructor(
    private readonly lease: Lease,
    private readonly work: LeasedWork,
    private readonly options: LeaseKeeperOptions = {},
  ) {}

  /** True while the lease store does not answer (readiness: the work is reconnecting, not standing by). */
  get storeUnreachable(): boolean {
    return this.storeAway;
  }

  /** True while the work runs: the lease is held and the work's start succeeded. */
  get held(): boolean {
    return this.running;
  }

  /** Resolves after the first attempt, holding (the work started, or its start failed) or standing by. */
  async start(): Promise<void> {
    await this.renewNow();
    await this.working;
  }

  private renewNow(): Promise<void> {
    this.renewing = this.renewing.then(async () => {
      if (this.stopped) return;
      const held = await this.renew();
      if (this.stopped) return;
      this.holding = held;
      if (held && !this.running && !this.starting) this.startWork();
      else if (!held && (this.running || this.starting)) this.stopWork();
      this.schedule(this.nextRenewalMs());
    });
    return this.renewing;
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = this.stopped ? null : setTimeout(() => void this.renewNow(), ms);
  }

  /** Marks the work running only once its start succeeded while the lease is still held. */
  private startWork(): void {
    this.starting = true;
    this.working = this.working.then(async () => {
      try {
        await this.work.start();
      } catch (err) {
        this.starting = false;
        this.failedStarts++;
        this.holding = false;
        this.options.onError?.(err);
        // Whatever the failed start left half open is closed before the next try.
        await this.work.stop().catch((e) => this.options.onError?.(e));
        await this.lease.release().catch((e) => this.options.onError?.(e));
        // Not renewed (so not taken again) before the backoff is over.
        this.schedule(this.nextRenewalMs());
        return;
      }
      this.starting = false;
      this.failedStarts = 0;
      if (!this.holding || this.stopped) {
        // Lost while starting: stopped before anything is written as the holder.
        await this.work.stop().catch((e) => this.options.onError?.(e));
        return;
      }
      this.running = true;
      this.options.onChange?.(true);
    });
  }

  private stopWork(): void {
    this.working = this.working.then(async () => {
      if (!this.running) return;
      this.running = false;
      try {
        await this.work.stop();
      } catch (err) {
        this.options.onError?.(err);
      }
      this.options.onChange?.(false);
    });
  }

  private nextRenewalMs(): number {
    // After an outage the lease is taken back within a second of the store's return.
    if (this.storeAway) return Math.min(1_000, this.lease.ttlMs / 3);
    if (this.failedStarts === 0 || this.running || this.starting) return this.lease.ttlMs / 3;
    const { retryInitialMs = 100, retryMaxMs = 30_000 } = this.options;
    return backoffDelay({ initialMs: retryInitialMs, maxMs: retryMaxMs }, this.failedStarts);
  }

  private async renew(): Promise<boolean> {
    let timeout: NodeJS.Timeout | undefined;
    this.storeAway = true;
    try {
      const late = new Promise<null>((resolve) => (timeout = setTimeout(() => resolve(null), this.lease.ttlMs / 3)));
      const held = await Promise.race([this.lease.acquire(), late]);
      if (held === null) return false;
      this.storeAway = false;
      return held;
    } catch (err) {
      this.options.onError?.(err);
      return false;
    } finally {
      clearTimeout(timeout);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.renewing;
    await this.working;
    if (this.running) {
      this.running = false;
      await this.work.stop();
    }
    await this.lease.release().catch((err) => this.options.onError?.(err));
  }
}
