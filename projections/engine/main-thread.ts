import type { Position, RecordedEvent } from '../../domain/shared/events.js';
import { Backoff, DEFAULT_RETRY } from '../../eventlog/backoff.js';
import { type FollowerStatus, LogFollower } from '../../eventlog/follower.js';
import { Pause } from '../../eventlog/pause.js';
import { type EventLog } from '../../eventlog/port.js';
import { CheckpointMoved, type ReadStore } from '../store/port.js';
import type { VersionOwnership } from './ownership.js';
import type { Projector } from './projector.js';
import { PositionWaiters, type ReadModelsDriver } from './status.js';
import { defineReadModels, ProjectionFailure, ProjectionStep, versionedCheckpointName } from './step.js';

export interface ProjectionRunnerOptions {
  /** The follower's name in /readyz, and the summary checkpoint's unless `summary` names another. */
  checkpointName?: string;
  /** The summary checkpoint (step.ts): where every projector is, for the processes that wait on it. */
  summary?: string;
  /** How long a write waits for its events to become visible before giving up. */
  waitTimeoutMs?: number;
  /** Told of each failed attempt to apply an event; the event is retried until it applies. */
  onError?: (error: unknown, event: RecordedEvent) => void;
  /** Where resubscriptions and apply retries are told (a logger). */
  report?: (message: string) => void;
  /** The wait before retrying an event or resubscribing, doubling up to the longest (eventlog/backoff.ts). */
  retryInitialMs?: number;
  retryMaxMs?: number;
  /**
   * Without transactions, the checkpoints are stored once per batch: after this many events, or
   * this long after the first unstored one. With them, each chunk's transaction holds its own.
   */
  checkpointEvery?: number;
  checkpointEveryMs?: number;
  /**
   * On a store several builds share: which versions this process writes (ownership.ts). Taken
   * when the runner starts and given up when it stops; every version, unless given.
   */
  ownership?: VersionOwnership;
}

/** Events a chunk holds at most: a transaction on MongoDB stays well inside its time and size limits. */
const CHUNK = 256;
/** How often the summary follows the checkpoints of versions another process writes (ownership.ts). */
const SUMMARY_REFRESH_MS = 100;
/** How soon checkpoints the store failed to take are tried again. */
const STORE_RETRY_MS = 1_000;

/** What a step over some events did: whether it ran in a transaction (its checkpoints then stored with it), and how many events it went through. */
interface Stepped {
  transaction: boolean;
  applied: number;
}

/**
 * The engine's driver on the main thread, for the read stores that are not a SQLite file of the
 * data dir (MongoDB, the in-memory store of an in-memory log or of EventStoreDB alone): follows
 * the log from the projectors' lowest checkpoint and applies what it delivers through the
 * engine's step (step.ts) in chunks: the events delivered while the previous chunk applied, up
 * to CHUNK, each chunk one transaction where the store has them. Writers await
 * `waitFor(position)` so that a write answers only once its events are visible to reads
 * (read-your-writes): once applied, or, in a transaction, once committed.
 *
 * It never skips an event: a chunk that fails is applied up to the failing event, which is then
 * retried, with capped backoff, until it applies (the follower reports `failed` meanwhile, and
 * no checkpoint passes it). A lost log or read store resubscribes from the stored checkpoints
 * (eventlog/follower.ts).
 */
export class ProjectionRunner implements ReadModelsDriver {
  private follower: LogFollower | null = null;
  private stopping = false;
  private readonly pause = new Pause();
  private readonly step: ProjectionStep;
  private readonly applied: PositionWaiters;
  private readonly checkpointName: string;
  /** The events delivered and not yet applied, and the chunk being applied. */
  private chunk: RecordedEvent[] = [];
  private applying: Promise<void> | null = null;
  private flushSoon: NodeJS.Immediate | null = null;
  /** Without transactions: events applied past the stored checkpoints, and the timer that stores them. */
  private unstored = 0;
  private storeTimer: NodeJS.Timeout | null = null;
  /** A resubscription asked for by a version's lease taken (one at a time). */
  private regaining: Promise<void> = Promise.resolve();
  /** Where another process writes some of this build's versions: the summary follows their checkpoints. */
  private summaryTimer: NodeJS.Timeout | null = null;
  private refreshing = false;
  /** A chunk failed at a stop: nothing delivered after it is applied (the next start resumes from the checkpoints). */
  private abandoned = false;

  constructor(
    private readonly log: EventLog,
    private readonly store: ReadStore,
    private readonly projectors: Projector[],
    private readonly options: ProjectionRunnerOptions = {},
  ) {
    this.checkpointName = options.checkpointName ?? 'read-models';
    this.applied = new PositionWaiters(options.waitTimeoutMs ?? 15_000);
    // Versioned checkpoints: on a store that several builds share, each version is built on its own.
    const ownership = options.ownership;
    this.step = new ProjectionStep(projectors, {
      summary: options.summary ?? this.checkpointName,
      checkpointOf: versionedCheckpointName,
      owns: ownership && ((p) => ownership.owns(p)),
      stores: ownership && ((p) => ownership.stores(p)),
    });
  }

  private get retry() {
    return { initialMs: this.options.retryInitialMs ?? DEFAULT_RETRY.initialMs, maxMs: this.options.retryMaxMs ?? DEFAULT_RETRY.maxMs };
  }

  async start(): Promise<void> {
    await defineReadModels(this.store, this.projectors);
    this.stopping = false;
    this.abandoned = false;
    const ownership = this.options.ownership;
    if (ownership) {
      await ownership.start(
        () => this.regain(),
        () => this.storeApplied(),
      );
      this.summaryTimer = setInterval(() => void this.refreshSummary(), SUMMARY_REFRESH_MS);
      this.summaryTimer.unref();
    }
    await this.follow();
  }

  /**
   * The summary again while another process writes some of the versions: their writers move on
   * without this runner's steps (an event only they read, say), and this build's readers wait on it.
   * Skipped while a chunk applies (its own save writes the summary).
   */
  private async refreshSummary(): Promise<void> {
    if (this.refreshing || this.applying || this.stopping || !this.step.sharesWriters()) return;
    this.refreshing = true;
    try {
      await this.exclusively(() => this.step.refreshSummary(this.store));
    } catch (err) {
      this.options.report?.(`${this.checkpointName}: the summary checkpoint: ${err instanceof Error ? err.message : String(err)}; written again shortly`);
    } finally {
      this.refreshing = false;
    }
  }

  /** A version's lease about to go: the chunk under way applied and every checkpoint stored. */
  private storeApplied(): Promise<void> {
    return this.exclusively(() => this.storeCheckpoints());
  }

  /**
   * One at a time with the chunks: every step, checkpoint store and summary of this runner, so
   * that none marks stored what another wrote, or writes a summary an older one then overwrites.
   */
  private exclusively(task: () => Promise<void>): Promise<void> {
    if (this.applying) return this.applying.catch(() => undefined).then(() => this.exclusively(task));
    const running = task();
    // What the chunks wait on: a task's failure is its caller's (told where it ran), never the
    // chunks' (only a chunk's own rejection, at a stop, stops the events queued behind it).
    const held: Promise<void> = running
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        if (this.applying === held) this.applying = null;
      });
    this.applying = held;
    return running;
  }

  private async follow(): Promise<void> {
    const { initialMs, maxMs } = this.retry;
    this.follower = new LogFollower({
      name: this.checkpointName,
      log: this.log,
      resume: () => this.resume(),
      handle: (e) => this.handle(e),
      onCheckpoint: (p) => this.passFiltered(p),
      report: this.options.report,
      retryInitialMs: initialMs,
      retryMaxMs: maxMs,
    });
    await this.follower.start();
  }

  /**
   * A version's lease taken while following: resubscribed from the lowest checkpoint, that
   * version's included, so it resumes where its last writer (another build's process) left it.
   */
  private regain(): void {
    this.regaining = this.regaining.then(async () => {
      const follower = this.follower;
      if (this.stopping || !follower) return;
      await follower.stop();
      await this.flush().catch(() => undefined);
      if (this.stopping || this.follower !== follower) return;
      this.options.report?.(`${this.checkpointName}: a read-model version's lease taken; resuming it from its checkpoint`);
      // Tried until it subscribes or the runner stops: the leases stay held meanwhile, so no one else would write.
      const backoff = new Backoff(this.retry);
      for (let attempt = 1; !this.stopping; attempt++) {
        try {
          await this.follow();
          return;
        } catch (err) {
          if (this.stopping) return;
          const delay = backoff.next();
          this.options.report?.(`${this.checkpointName}: resubscribing after a lease taken failed (${err instanceof Error ? err.message : String(err)}); again in ${delay} ms (attempt ${attempt})`);
          await this.pause.for(delay);
        }
      }
    });
  }

  /** Where a (re)subscription starts: the lowest stored checkpoint, every projector past it skipping what it applied. */
  private async resume(): Promise<Position | null> {
    this.chunk = [];
    // One at a time with the chunks, checkpoint stores and summary refreshes, as they are.
    await this.exclusively(async () => {
      this.chunk = [];
      // The versions whose leases are held now are written from here on, from their stored checkpoints.
      this.options.ownership?.activate();
      await this.step.load(this.store, true);
      // A build whose projectors are all built already (another build shared them) has its summary written now, not at the next event.
      await this.step.save(this.store);
      this.step.settle();
    });
    const stored = this.step.lowest();
    if (stored.commit === 0n && stored.prepare === 0n) return null;
    // Another lease holder may have moved the shared store on while this process stood by.
    this.applied.reach(stored);
    return stored;
  }

  /**
   * Takes the event into the next chunk, applied once the current one is done and the
   * subscription has delivered what it had at hand (a chunk that is full is applied at once).
   */
  private async handle(event: RecordedEvent): Promise<void> {
    if (this.applying) await this.applying;
    this.chunk.push(event);
    if (this.chunk.length >= CHUNK) await this.flush();
    else this.flushSoon ??= setImmediate(() => void this.flush().catch(() => undefined));
  }

  /** A stretch the subscription filtered out: every projector passes it, once what came before has applied. */
  private async passFiltered(position: Position): Promise<void> {
    await this.flush();
    await this.exclusively(async () => {
      const { transaction } = await this.stepThrough([], () => position);
      await this.reached(position, transaction, 0);
    });
  }

  private flush(): Promise<void> {
    if (this.flushSoon) clearImmediate(this.flushSoon);
    this.flushSoon = null;
    if (this.abandoned) this.chunk = [];
    if (this.applying) return this.applying.then(() => this.flush());
    const events = this.chunk.splice(0);
    if (!events.length) return Promise.resolve();
    const applying = this.applyChunk(events).finally(() => {
      if (this.applying === applying) this.applying = null;
    });
    return (this.applying = applying);
  }

  /**
   * A chunk failing at a stop: the events queued behind it (an event handed over while a
   * checkpoint store ran, which did not wait on this chunk) are dropped, never applied past it.
   */
  private abandon(failure: unknown): unknown {
    this.abandoned = true;
    this.chunk = [];
    return failure;
  }

  /** Applies a chunk, retrying from its failing event until every event of it applied. */
  private async applyChunk(events: RecordedEvent[]): Promise<void> {
    // Made at the first failure only: this runs for every chunk.
    let backoff: Backoff | null = null;
    let attempt = 1;
    // CheckpointMoved met in a row: the first goes on at once from the checkpoints read again, the next waits as a failure does.
    let moved = 0;
    while (events.length) {
      const stepped = await this.stepOrFailure(events);
      if (!('failure' in stepped)) {
        if (attempt > 1) {
          this.follower?.setFailing(false);
          const e = events[0];
          this.options.report?.(`projection: ${e.type} at ${e.stream}@${e.revision} applied on attempt ${attempt}`);
          attempt = 1;
          backoff = null;
        }
        moved = 0;
        await this.reachedPart(events, stepped);
        continue;
      }
      let failure = stepped.failure;
      if (this.stopping) throw this.abandon(failure);
      if (failure instanceof ProjectionFailure && failure.index > 0) {
        // The events before the failing one apply on their own; the failing one is retried, never
        // passed. Should they fail too, that failure is waited on below like any other.
        const before = events.splice(0, failure.index);
        const part = await this.stepOrFailure(before);
        if ('failure' in part) failure = part.failure;
        else {
          moved = 0;
          await this.reachedPart(before, part);
        }
        events.unshift(...before);
        if (!('failure' in part)) continue;
        if (this.stopping) throw this.abandon(failure);
      }
      if (failure instanceof CheckpointMoved) {
        // Another process wrote a version this one applied (its lease passed meanwhile): nothing
        // of the step landed in a transaction; go on from what that writer stored.
        this.options.report?.(`projection: ${failure.message}; going on from its checkpoints`);
        await this.step.load(this.store, true).catch(() => undefined);
        if (moved++ === 0) continue;
      }
      // What was applied before the failing event is stored before the wait, not only after it
      // applies: a version's lease may pass meanwhile, and its next writer starts from there.
      if (this.unstored || this.step.unsaved()) await this.storeCheckpoints();
      this.follower?.setFailing(true);
      const failed = failure instanceof ProjectionFailure ? failure.event : events[0];
      const cause = failure instanceof ProjectionFailure ? failure.cause : failure;
      this.options.onError?.(cause, failed);
      const why = cause instanceof Error ? cause.message : String(cause);
      const delay = (backoff ??= new Backoff(this.retry)).next();
      const who = failure instanceof ProjectionFailure ? `projection ${failure.projector}` : 'projection';
      this.options.report?.(`${who}: ${failed.type} at ${failed.stream}@${failed.revision} failed (${why}); retrying in ${delay} ms (attempt ${attempt})`);
      attempt++;
      // A stop that came while the store or the reload above ran had no pause to cut short.
      if (this.stopping) throw this.abandon(failure);
      await this.pause.for(delay);
      // Stopping: the chunk fails, so neither a checkpoint nor any waiter passes its events.
      if (this.stopping) throw this.abandon(failure);
    }
  }

  /**
   * The `applied` events a step went through, taken off the front of `events`, reached; where the
   * step ended before the rest (a version's lease going: ProjectionStep.apply), what it applied is
   * stored now, with a transaction's commit or right after, before the rest is applied without it.
   */
  private async reachedPart(events: RecordedEvent[], { applied, transaction }: Stepped): Promise<void> {
    const done = events.splice(0, applied);
    if (done.length) await this.reached(done[done.length - 1].position, transaction, done.length);
    if (events.length && this.unstored) await this.storeCheckpoints();
  }

  /** One step over the events, or why it failed. */
  private stepOrFailure(events: RecordedEvent[]): Promise<Stepped | { failure: unknown }> {
    return this.stepChunk(events).catch((failure: unknown) => ({ failure }));
  }

  /** One step over the chunk: whether it ran in a transaction (its checkpoints then stored with it), and how many events it went through. */
  private stepChunk(events: RecordedEvent[]): Promise<Stepped> {
    return this.stepThrough(events, (applied) => events[applied - 1].position);
  }

  private async stepThrough(events: RecordedEvent[], through: (applied: number) => Position): Promise<Stepped> {
    let applied = 0;
    const { transaction } = await this.step.run(this.store, async (store, transaction) => {
      applied = await this.step.apply(events, store);
      this.step.advance(through(applied));
      if (transaction) await this.step.save(store);
    });
    return { transaction, applied };
  }

  /**
   * Wakes the writers waiting for this position (they need the read models, which are applied,
   * or committed) and, without transactions, stores the checkpoints once per batch, not per
   * chunk (a round trip each on MongoDB). A crash loses at most a batch of checkpoints: the
   * events after them are applied again on restart, which changes nothing.
   */
  private async reached(position: Position, transaction: boolean, events: number): Promise<void> {
    // Stored even where no writer waited for it: events applied again after a version's lease
    // was taken (resubscribed from its checkpoint) are behind what the waiters have reached.
    this.applied.reach(position);
    if (transaction) return;
    this.unstored += Math.max(events, 1);
    if (this.unstored >= (this.options.checkpointEvery ?? 256)) await this.storeCheckpoints();
    else this.storeLater(this.options.checkpointEveryMs ?? 20);
  }

  private storeLater(ms: number): void {
    this.storeTimer ??= setTimeout(() => void this.exclusively(() => this.storeCheckpoints()), ms);
  }

  /**
   * Stores the checkpoints of what was applied. Never rejects: a store that fails is told and
   * tried again shortly (the events stay applied; a crash meanwhile applies them again, which
   * changes nothing), and a checkpoint another process moved is read again (CheckpointMoved),
   * what this one applied past it stored next time.
   */
  private async storeCheckpoints(): Promise<void> {
    if (this.storeTimer) clearTimeout(this.storeTimer);
    this.storeTimer = null;
    const count = this.unstored;
    this.unstored = 0;
    try {
      await this.step.save(this.store);
      this.step.settle();
    } catch (err) {
      this.unstored += count;
      if (err instanceof CheckpointMoved) {
        this.options.report?.(`projection: ${err.message}; going on from its checkpoints`);
        await this.step.load(this.store, true).catch((e) => this.reportStoreError(e));
      } else this.reportStoreError(err);
      if (!this.stopping) this.storeLater(err instanceof CheckpointMoved ? (this.options.checkpointEveryMs ?? 20) : STORE_RETRY_MS);
    }
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
    if (this.summaryTimer) clearInterval(this.summaryTimer);
    this.summaryTimer = null;
    await this.regaining;
    await this.follower?.stop();
    this.follower = null;
    // What was delivered before the stop is applied unless it is failing (then it is left to the next start).
    await this.flush().catch(() => undefined);
    // After whatever is queued with the chunks (a timer's store that fired during the last one
    // included), so that no checkpoint is written once stop() has returned.
    await this.exclusively(async () => {
      if (this.storeTimer || this.unstored || this.step.unsaved()) await this.storeCheckpoints();
    });
    // The versions' leases last: what this process applied is stored before another takes them.
    await this.options.ownership?.stop();
  }
}
