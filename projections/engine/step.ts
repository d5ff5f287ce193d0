import { fromLog } from '../../domain/events.js';
import { comparePositions, type Position, type RecordedEvent } from '../../domain/shared/events.js';
import type { ReadStore } from '../store/port.js';
import { eventRouter, type Projector } from './projector.js';

/** Each projector keeps its own checkpoint, so one read model can be rebuilt while the others stay. */
export const checkpointName = (p: Pick<Projector, 'name'>): string => `projector:${p.name}`;
/** The name a projector's read-model version is recorded under (SQLite, where one version is live at a time). */
export const versionName = checkpointName;

/**
 * The projectors whose read models a database does not hold at the code's version (a version
 * raised, or never built), given the versions it records: those prepare() drops and builds again,
 * and those `turnout rebuild --prepare` builds ahead of a release (runtime/prepare.ts).
 */
export function outOfDate<P extends Pick<Projector, 'name' | 'version'>>(projectors: readonly P[], recorded: (name: string) => number | null): P[] {
  return projectors.filter((p) => recorded(versionName(p)) !== p.version);
}
/**
 * The checkpoint of a projector's version, where versions live side by side (MongoDB): a build
 * with a new version starts that one from the log's start, and the old build's stays where it is.
 */
export const versionedCheckpointName = (p: Projector): string => `projector:${p.name}@v${p.version}`;

/** Where a projector with no checkpoint starts: before the first event. */
export const START: Position = { commit: 0n, prepare: 0n };

/** The lower of two positions, `b` where there is no `a` yet. */
const lower = (a: Position | null, b: Position): Position => (a === null || comparePositions(b, a) < 0 ? b : a);

/** An event a projector could not apply; `index` events of the chunk before it applied. */
export class ProjectionFailure extends Error {
  constructor(
    readonly projector: string,
    readonly event: RecordedEvent,
    readonly index: number,
    override readonly cause: unknown,
  ) {
    super(`projection ${projector}: ${event.type} at ${event.stream}@${event.revision} failed (${cause instanceof Error ? cause.message : String(cause)})`);
  }
}

export interface StepOptions {
  /**
   * A checkpoint also kept for the whole set: the position every projector has reached, which
   * processes that do not project wait on (checkpoint-wait.ts).
   */
  summary?: string;
  /** Each projector's checkpoint name: checkpointName unless given. */
  checkpointOf?: (p: Projector) => string;
  /**
   * The projectors this step writes, where other processes write others (a read store several
   * builds share: each version has one writer, main-thread.ts VersionOwnership). A projector not
   * owned is neither applied nor moved; the summary takes its stored checkpoint, read at each
   * save, so it passes a position only once that version's writer has. All, unless given.
   */
  owns?: (p: Projector) => boolean;
  /**
   * The projectors whose checkpoints this step stores: those it owns, and one whose ownership
   * is ending (ownership.ts: applied no more, what it applied still stored). `owns`, unless given.
   */
  stores?: (p: Projector) => boolean;
}

/**
 * The engine's one step, over any read store: a chunk of events applied to every projector that
 * reads their stream and has not applied them yet, each projector with its own checkpoint. Where
 * the store has transactions (ReadStore.transactions), a chunk's writes and the checkpoints that
 * moved are one transaction, so what a crash leaves is consistent with the checkpoints and a
 * restart applies nothing twice. Where it has none, each checkpoint is written after the writes
 * it covers: a crash between them applies those events again on restart, which changes nothing
 * as every projector is idempotent (the `_rev` guard, projections/records.ts).
 *
 * The drivers (thread-loop.ts through sqlite-step.ts, main-thread.ts) say where
 * the events come from and when a chunk ends; this holds what every one of them applies.
 */
export class ProjectionStep {
  /** What each projector has applied, in this step's working view (ahead of `stored` until saved). */
  private readonly working = new Map<Projector, Position>();
  /** What each projector's checkpoint holds, as last read or committed. */
  private readonly stored = new Map<Projector, Position>();
  private storedSummary: Position | null = null;
  /** The summary the last save wrote (or found): stored by settle(). */
  private savedSummary: Position | null = null;
  /** The positions the last save wrote, as they were when it began: what settle() marks stored. */
  private saved: Map<Projector, Position> | null = null;
  private readonly owns: (p: Projector) => boolean;
  private readonly stores: (p: Projector) => boolean;
  /** The projectors the chunk under way applies, where ownership can change (taken at its start). */
  private chunkOwned: Set<Projector> | null = null;
  /** Whether the step under way runs in a transaction, which puts the working view back if it fails (run). */
  private rollsBack = false;
  /** The projectors that read each stream category and event type. */
  private readonly route: (stream: string, type: string) => Projector[];
  private readonly nameOf: (p: Projector) => string;

  constructor(
    readonly projectors: readonly Projector[],
    private readonly options: StepOptions = {},
  ) {
    this.route = eventRouter(projectors);
    this.nameOf = options.checkpointOf ?? checkpointName;
    this.owns = options.owns ?? (() => true);
    this.stores = options.stores ?? this.owns;
  }

  /**
   * Runs `work` in the store's transaction where it has one (telling it, and answering, whether
   * it did), else against the store itself. A transaction that fails leaves the working view as
   * stored; one that commits stores it.
   */
  async run<T>(store: ReadStore, work: (store: ReadStore, transaction: boolean) => Promise<T>): Promise<{ result: T; transaction: boolean }> {
    const transactions = (await store.transactions?.()) ?? null;
    this.rollsBack = transactions !== null;
    if (!transactions) return { result: await work(store, false), transaction: false };
    try {
      const result = await transactions.run(async (tx) => {
        // Run again after a transient error, the work starts from what is stored.
        this.discard();
        return work(tx, true);
      });
      this.settle();
      return { result, transaction: true };
    } catch (err) {
      this.discard();
      throw err;
    }
  }

  /**
   * Reads every projector's checkpoint (inside the step's transaction, so no other writer's
   * events are applied again). `keepApplied`: the working view does not go back, as what it holds
   * past a checkpoint is applied, its checkpoint not yet written (a store without transactions).
   */
  async load(store: ReadStore, keepApplied = false): Promise<void> {
    this.storedSummary = this.options.summary ? await store.getCheckpoint(this.options.summary) : null;
    for (const p of this.projectors) {
      const at = (await store.getCheckpoint(this.nameOf(p))) ?? START;
      this.stored.set(p, at);
      const working = this.working.get(p);
      if (!keepApplied || !working || comparePositions(working, at) < 0) this.working.set(p, at);
    }
  }

  /**
   * The position every projector this step writes has reached (in the working view); where it
   * writes none, every projector's as last read (a subscription's start that applies nothing).
   */
  lowest(): Position {
    return this.lowestOf(true) ?? this.lowestOf(false) ?? START;
  }

  private lowestOf(owned: boolean): Position | null {
    let low: Position | null = null;
    for (const [p, v] of this.working) if (!owned || this.owns(p)) low = lower(low, v);
    return low;
  }

  /** The position every projector's stored checkpoint has reached. */
  lowestStored(): Position {
    let low: Position | null = null;
    for (const v of this.stored.values()) if (low === null || comparePositions(v, low) < 0) low = v;
    return low ?? START;
  }

  /**
   * Applies `events` (in log order) to every projector that reads its stream and is not past it;
   * moves no position (advance does). Answers how many it went through: all of them, or, where a
   * projector this step owned at the start stops being owned (its version's lease going, on a
   * store several builds share), those before that event: the chunk ends there, so that what it
   * applied of that version is stored at once, with the chunk's own checkpoints, and the rest is
   * applied by the next step without it. Throws a ProjectionFailure when a projector throws.
   */
  async apply(events: readonly RecordedEvent[], store: ReadStore): Promise<number> {
    const owned = (this.chunkOwned = this.options.owns ? new Set(this.projectors.filter((p) => this.owns(p))) : null);
    for (let i = 0; i < events.length; i++) {
      const e = events[i];
      // Ownership is taken at the start (above), so it can change only from the second event on.
      if (owned && i > 0 && this.losesAny(owned)) return i;
      for (const p of this.route(e.stream, e.type)) {
        if (comparePositions(this.working.get(p)!, e.position) >= 0 || (owned && !owned.has(p))) continue;
        try {
          await p.apply(fromLog(e), store);
        } catch (err) {
          throw new ProjectionFailure(p.name, e, i, err);
        }
        // Where nothing rolls back (a store without transactions), each projector's own position
        // as it applies: should a later one fail, what was applied is not applied again on the
        // retry. In a transaction advance() moves them all once (a failure puts them back: run).
        if (!this.rollsBack) this.working.set(p, e.position);
      }
    }
    return events.length;
  }

  private losesAny(owned: ReadonlySet<Projector>): boolean {
    for (const p of owned) if (!this.owns(p)) return true;
    return false;
  }

  /**
   * Every projector the step applied has applied everything up to `through`, the events it does
   * not read included: where ownership can change, those owned when the chunk began (apply).
   */
  advance(through: Position): void {
    const owned = this.chunkOwned;
    this.chunkOwned = null;
    for (const [p, at] of this.working) if ((owned ? owned.has(p) : this.owns(p)) && comparePositions(at, through) < 0) this.working.set(p, through);
  }

  /**
   * Writes the checkpoints the working view moved: each projector's, then the summary. Only
   * those that move are written, so a step that found everything applied writes nothing. What
   * this step applied is written even where it no longer stores that projector (a lease gone
   * while its chunk applied): where several processes write, the store moves a checkpoint only
   * from the position this step last knew (ReadStore.moveCheckpoints), so that write cannot undo
   * a successor's, and throws CheckpointMoved if one came first.
   */
  async save(store: ReadStore): Promise<void> {
    // The positions as they are now: a chunk applied while this save waits on the store (a
    // driver that stores checkpoints on a timer) is stored by the next save, not marked stored by this one.
    const saving = new Map<Projector, Position>();
    for (const [p, at] of this.working) if (this.stores(p) || comparePositions(at, this.stored.get(p)!) > 0) saving.set(p, at);
    this.saved = saving;
    const moved: Array<[Projector, Position]> = [];
    for (const [p, at] of saving) if (comparePositions(at, this.stored.get(p)!) > 0) moved.push([p, at]);
    if (store.moveCheckpoints) await store.moveCheckpoints(moved.map(([p, to]) => ({ name: this.nameOf(p), from: this.stored.get(p)!, to })));
    else if (store.setCheckpoints) await store.setCheckpoints(moved.map(([p, at]) => [this.nameOf(p), at]));
    else for (const [p, at] of moved) await store.setCheckpoint(this.nameOf(p), at);
    await this.saveSummary(store, saving);
  }

  /**
   * The summary: the lowest of `positions` (this step's, as written) and of the stored
   * checkpoints of the versions another process writes. Where some are, the driver calls it again
   * now and then (`refreshSummary`), since their writers move on without this step's saves.
   */
  private async saveSummary(store: ReadStore, positions: ReadonlyMap<Projector, Position>): Promise<void> {
    const summary = this.options.summary;
    if (!summary) return;
    let low: Position | null = null;
    for (const at of positions.values()) low = lower(low, at);
    // A version another process writes is as far as its own checkpoint says.
    for (const p of this.projectors) if (!positions.has(p)) low = lower(low, (await store.getCheckpoint(this.nameOf(p))) ?? START);
    low ??= START;
    this.savedSummary = low;
    if (!this.storedSummary || comparePositions(low, this.storedSummary) > 0) await store.setCheckpoint(summary, low);
  }

  /** The summary the last save wrote is stored (it only ever moves on). */
  private keepSummary(): void {
    if (this.options.summary && this.savedSummary && (!this.storedSummary || comparePositions(this.savedSummary, this.storedSummary) > 0)) this.storedSummary = this.savedSummary;
  }

  /**
   * Whether a projector has applied past its stored checkpoint: a step without transactions
   * moves each projector as it applies, a failing one included (a store without transactions
   * keeps what the projectors before the failing one wrote), ahead of what any save wrote.
   */
  unsaved(): boolean {
    for (const [p, at] of this.working) if (comparePositions(at, this.stored.get(p)!) > 0) return true;
    return false;
  }

  /** Whether some version is written by another process (the summary then follows its checkpoints: refreshSummary). */
  sharesWriters(): boolean {
    return this.projectors.some((p) => !this.stores(p));
  }

  /** The summary again, from what this step has stored and the other writers' checkpoints; between steps only. */
  async refreshSummary(store: ReadStore): Promise<void> {
    const stored = new Map<Projector, Position>();
    for (const [p, at] of this.stored) if (this.stores(p)) stored.set(p, at);
    await this.saveSummary(store, stored);
    this.keepSummary();
  }

  /** The working view is stored (its transaction committed, or its checkpoints written). */
  settle(): void {
    const saved = this.saved ?? new Map([...this.working].filter(([p]) => this.stores(p)));
    this.saved = null;
    for (const [p, at] of saved) this.stored.set(p, at);
    this.keepSummary();
  }

  /** Back to what is stored (a transaction rolled back). */
  discard(): void {
    this.saved = null;
    for (const [p, at] of this.stored) this.working.set(p, at);
  }

  /** Whether a projector is `behind` events or more behind `head`, by its working position. */
  behind(head: bigint, behind: number): Projector[] {
    return this.projectors.filter((p) => head - this.working.get(p)!.commit > BigInt(behind));
  }
}

/**
 * Lays out (or checks) every collection of `projectors` in `store`, each with its projector's
 * version: the one place they are listed.
 */
export async function defineReadModels(store: ReadStore, projectors: readonly Projector[]): Promise<void> {
  for (const p of projectors) for (const c of p.collections) await store.defineCollection({ ...c, version: p.version });
}
