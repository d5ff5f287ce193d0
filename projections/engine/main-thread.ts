import { fromLog, type LoggedEvent } from '../../domain/events.js';
import { comparePositions, type Position, type RecordedEvent } from '../../domain/shared/events.js';
import { Backoff, DEFAULT_RETRY } from '../../eventlog/backoff.js';
import { type FollowerStatus, LogFollower } from '../../eventlog/follower.js';
import { Pause } from '../../eventlog/pause.js';
import { type EventLog } from '../../eventlog/port.js';
import type { ReadStore } from '../store/port.js';
import { categoryRouter, type Projector } from './projector.js';
import { PositionWaiters, type ReadModelsDriver } from './status.js';

export interface ProjectionRunnerOptions {
  checkpointName?: string;
  /** How long a write waits for its events to become visible before giving up. */
  waitTimeoutMs?: number;
  /** Told of each failed attempt to apply an event; the event is retried until it applies. */
  onError?: (error: unknown, event: RecordedEvent) => void;
  /** Where resubscriptions and apply retries are told (a logger). */
  report?: (message: string) => void;
  /** The wait before retrying an event or resubscribing, doubling up to the longest (eventlog/backoff.ts). */
  retryInitialMs?: number;
  retryMaxMs?: number;
  /** The checkpoint is stored once per batch: after this many events, or this long after the first unstored one. */
  checkpointEvery?: number;
  checkpointEveryMs?: number;
}

/**
 * The engine's driver on the main thread, for the read stores that are not a SQLite file of the
 * data dir (MongoDB, the in-memory store of an in-memory log or of EventStoreDB alone): follows
 * the log from the stored checkpoint and feeds every event to every projector, in log order.
 * Writers await `waitFor(position)` so that a write answers only once its events are visible to
 * reads (read-your-writes).
 *
 * It never skips an event: one that fails to apply is retried, with capped backoff, until it
 * applies (the follower reports `failed` meanwhile, and the checkpoint stays before it). A lost
 * log or read store resubscribes from the stored checkpoint (eventlog/follower.ts).
 */
export class ProjectionRunner implements ReadModelsDriver {
  private follower: LogFollower | null = null;
  private stopping = false;
  private readonly pause = new Pause();
  /** The projectors that read each stream category. */
  private readonly route: (stream: string) => Projector[];
  private readonly applied: PositionWaiters;
  private readonly checkpointName: string;
  /** The last stored checkpoint, and how many events the runner has applied past it. */
  private stored: Position | null = null;
  private unstored = 0;
  private storeTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly log: EventLog,
    private readonly store: ReadStore,
    private readonly projectors: Projector[],
    private readonly options: ProjectionRunnerOptions = {},
  ) {
    this.checkpointName = options.checkpointName ?? 'read-models';
    this.applied = new PositionWaiters(options.waitTimeoutMs ?? 15_000);
    this.route = categoryRouter(projectors);
  }

  private get retry() {
    return { initialMs: this.options.retryInitialMs ?? DEFAULT_RETRY.initialMs, maxMs: this.options.retryMaxMs ?? DEFAULT_RETRY.maxMs };
  }

  async start(): Promise<void> {
    for (const p of this.projectors) for (const c of p.collections) await this.store.defineCollection(c);
    this.stopping = false;
    const { initialMs, maxMs } = this.retry;
    this.follower = new LogFollower({
      name: this.checkpointName,
      log: this.log,
      resume: () => this.resume(),
      handle: (e) => this.handle(e),
      onCheckpoint: (p) => this.advance(p),
      report: this.options.report,
      retryInitialMs: initialMs,
      retryMaxMs: maxMs,
    });
    await this.follower.start();
  }

  /** Where a (re)subscription starts: the stored checkpoint. */
  private async resume(): Promise<Position | null> {
    const stored = await this.store.getCheckpoint(this.checkpointName);
    // Another lease holder may have moved the shared store on while this process stood by.
    if (stored) this.applied.reach(stored);
    this.stored = stored;
    return stored;
  }

  private async handle(recorded: RecordedEvent): Promise<void> {
    const event = fromLog(recorded);
    for (const p of this.route(event.stream)) await this.apply(p, event);
    await this.advance(event.position);
  }

  /** Applies until it succeeds: a skipped event would leave a read model wrong for good. */
  private async apply(p: Projector, event: LoggedEvent): Promise<void> {
    // Made at the first failure only: this runs for every event and projector.
    let backoff: Backoff | null = null;
    for (let attempt = 1; ; attempt++) {
      try {
        await p.apply(event, this.store);
        if (attempt > 1) {
          this.follower?.setFailing(false);
          this.options.report?.(`projection ${p.name}: ${event.type} at ${event.stream}@${event.revision} applied on attempt ${attempt}`);
        }
        return;
      } catch (err) {
        if (this.stopping) throw err;
        this.follower?.setFailing(true);
        this.options.onError?.(err, event);
        const why = err instanceof Error ? err.message : String(err);
        const delay = (backoff ??= new Backoff(this.retry)).next();
        this.options.report?.(`projection ${p.name}: ${event.type} at ${event.stream}@${event.revision} failed (${why}); retrying in ${delay} ms (attempt ${attempt})`);
        await this.pause.for(delay);
        // Stopping: the handler fails, so neither the checkpoint nor any waiter passes this event.
        if (this.stopping) throw err;
      }
    }
  }

  /**
   * Wakes the writers waiting for this position at once (they need the read models, which are
   * applied) and stores the checkpoint once per batch, not per event (three round trips per event
   * on MongoDB). A crash loses at most a batch of checkpoint: the events after the stored one are
   * applied again on restart, which changes nothing, as every projector ignores an event its
   * document has already seen (the `_rev` guard, projections/records.ts).
   */
  private async advance(position: Position): Promise<void> {
    if (!this.applied.reach(position)) return;
    if (++this.unstored >= (this.options.checkpointEvery ?? 256)) await this.storeCheckpoint();
    else this.storeTimer ??= setTimeout(() => void this.storeCheckpoint().catch((err) => this.reportStoreError(err)), this.options.checkpointEveryMs ?? 20);
  }

  private async storeCheckpoint(): Promise<void> {
    if (this.storeTimer) clearTimeout(this.storeTimer);
    this.storeTimer = null;
    const position = this.applied.position;
    if (!position || (this.stored && comparePositions(position, this.stored) <= 0)) return;
    const count = this.unstored;
    this.unstored = 0;
    try {
      await this.store.setCheckpoint(this.checkpointName, position);
    } catch (err) {
      this.unstored += count;
      throw err;
    }
    if (!this.stored || comparePositions(position, this.stored) > 0) this.stored = position;
  }

  private reportStoreError(err: unknown): void {
    // The next batch stores it; until then a restart merely applies a few events again.
    this.options.report?.(`projection checkpoint: ${err instanceof Error ? err.message : String(err)}; stored with the next batch`);
  }

  /** Resolves once every event up to `position` is applied. */
  waitFor(position: Position): Promise<void> {
    return this.applied.wait(position);
  }

  async status(): Promise<FollowerStatus> {
    return this.follower ? this.follower.status() : { name: this.checkpointName, state: 'catching_up', behind: null };
  }

  /** The main thread's catch-up is told by the follower's status (watchProgress), not by a meter. */
  progress(): null {
    return null;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.pause.wake();
    await this.follower?.stop();
    this.follower = null;
    await this.storeCheckpoint().catch((err) => this.reportStoreError(err));
  }
}
