import { type Category, fromLog, type LoggedEvent } from '../domain/events.js';
import { comparePositions, type Position, type RecordedEvent } from '../domain/shared/events.js';
import { type FollowerStatus, LogFollower } from '../eventlog/follower.js';
import { Pause } from '../eventlog/pause.js';
import { type EventLog } from '../eventlog/port.js';
import { categoryRouter } from './routing.js';
import type { CollectionDef, ReadStore } from './store/port.js';

export interface Projector<C extends Category = Category> {
  name: string;
  /**
   * The read model's schema version: raise it when what the projector writes changes (a field
   * added, a rule fixed); the embedded store then rebuilds this read model from the log at start.
   */
  version: number;
  collections: CollectionDef[];
  /**
   * The stream categories (`constituent` of `constituent-12`) whose events this projector reads.
   * Left out, it is given every event. The runner skips the others without calling `apply`.
   */
  categories?: readonly C[];
  /**
   * Empties what the projector keeps outside its collections (a table of its own, written in
   * apply), when the embedded store rebuilds it (sqlite-projection.ts prepare).
   */
  reset?(): void;
  /**
   * The tables it keeps outside its collections (those `reset` empties), by name: a rebuild that
   * builds this projector apart (`independent`) copies them across with its collections.
   */
  tables?: readonly string[];
  /**
   * Reads nothing from the store and writes nothing another projector reads (an activity log, the
   * change feed: a row per event from the event alone). An offline rebuild of the embedded read
   * models (runtime/rebuild.ts) builds such projectors on a second thread, in a file of their own,
   * and copies what they wrote in at the end. One that reads a collection of another projector
   * fails that rebuild (the collection is unknown in its file), never silently.
   */
  independent?: boolean;
  /** Applies one event of its categories. Must be idempotent: a redelivered event changes nothing. */
  apply(event: LoggedEvent<C>, store: ReadStore): Promise<void>;
}

export interface ProjectionRunnerOptions {
  checkpointName?: string;
  /** How long a write waits for its events to become visible before giving up. */
  waitTimeoutMs?: number;
  /** Told of each failed attempt to apply an event; the event is retried until it applies. */
  onError?: (error: unknown, event: RecordedEvent) => void;
  /** Where resubscriptions and apply retries are told (a logger). */
  report?: (message: string) => void;
  /** The wait before retrying an event or resubscribing, doubling up to the longest. */
  retryInitialMs?: number;
  retryMaxMs?: number;
  /** The checkpoint is stored once per batch: after this many events, or this long after the first unstored one. */
  checkpointEvery?: number;
  checkpointEveryMs?: number;
}

/**
 * Follows the log from the stored checkpoint and feeds every event to every projector, in log
 * order. Writers await `waitFor(position)` so that a write answers only once its events are
 * visible to reads (read-your-writes).
 *
 * It never skips an event: one that fails to apply is retried, with capped backoff, until it
 * applies (the follower reports `failed` meanwhile, and the checkpoint stays before it). A lost
 * log or read store resubscribes from the stored checkpoint (eventlog/follower.ts).
 */
export class ProjectionRunner {
  private processed: Position | null = null;
  private follower: LogFollower | null = null;
  private stopping = false;
  private readonly backoff = new Pause();
  /** The projectors that read each stream category. */
  private readonly route: (stream: string) => Projector[];
  private waiters: Array<{ position: Position; resolve: () => void }> = [];
  private readonly checkpointName: string;
  private readonly waitTimeoutMs: number;
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
    this.waitTimeoutMs = options.waitTimeoutMs ?? 15_000;
    this.route = categoryRouter(projectors);
  }

  async start(): Promise<void> {
    for (const p of this.projectors) for (const c of p.collections) await this.store.defineCollection(c);
    this.stopping = false;
    const { report, retryInitialMs, retryMaxMs } = this.options;
    this.follower = new LogFollower({
      name: this.checkpointName,
      log: this.log,
      resume: () => this.resume(),
      handle: (e) => this.handle(e),
      onCheckpoint: (p) => this.advance(p),
      report,
      retryInitialMs,
      retryMaxMs,
    });
    await this.follower.start();
  }

  /** Where a (re)subscription starts: the stored checkpoint. */
  private async resume(): Promise<Position | null> {
    const stored = await this.store.getCheckpoint(this.checkpointName);
    // Another lease holder may have moved the shared store on while this process stood by.
    if (stored && (!this.processed || comparePositions(stored, this.processed) > 0)) this.processed = stored;
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
    let delay = this.options.retryInitialMs ?? 100;
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
        this.options.report?.(`projection ${p.name}: ${event.type} at ${event.stream}@${event.revision} failed (${why}); retrying in ${delay} ms (attempt ${attempt})`);
        await this.backoff.for(delay);
        // Stopping: the handler fails, so neither the checkpoint nor any waiter passes this event.
        if (this.stopping) throw err;
        delay = Math.min(delay * 2, this.options.retryMaxMs ?? 30_000);
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
    if (this.processed && comparePositions(position, this.processed) <= 0) return;
    this.processed = position;
    this.wake(position);
    if (++this.unstored >= (this.options.checkpointEvery ?? 256)) await this.storeCheckpoint();
    else this.storeTimer ??= setTimeout(() => void this.storeCheckpoint().catch((err) => this.reportStoreError(err)), this.options.checkpointEveryMs ?? 20);
  }

  private async storeCheckpoint(): Promise<void> {
    if (this.storeTimer) clearTimeout(this.storeTimer);
    this.storeTimer = null;
    const position = this.processed;
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

  private wake(position: Position): void {
    if (this.waiters.length) {
      const still: typeof this.waiters = [];
      for (const w of this.waiters) (comparePositions(w.position, position) <= 0 ? w.resolve() : still.push(w));
      this.waiters = still;
    }
  }

  /** Resolves once every event up to `position` is applied. */
  waitFor(position: Position): Promise<void> {
    if (this.processed && comparePositions(position, this.processed) <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done);
        reject(new Error(`read models did not reach position ${position.commit} within ${this.waitTimeoutMs} ms`));
      }, this.waitTimeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.waiters.push({ position, resolve: done });
    });
  }

  /** The follower's readiness (decisions.md §1): caught up once it first reached the head it started at. */
  async status(): Promise<FollowerStatus> {
    return this.follower ? this.follower.status() : { name: this.checkpointName, state: 'catching_up', behind: null };
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.backoff.wake();
    await this.follower?.stop();
    this.follower = null;
    await this.storeCheckpoint().catch((err) => this.reportStoreError(err));
  }
}
