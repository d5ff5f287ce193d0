import type { RecordedEvent } from '../../domain/shared/events.js';
import { type ApiKeyMark, touchesApiKeys } from '../api-key-mark.js';
import type { SqliteReadCore } from '../store/sqlite-core.js';
import { SqliteReadStore } from '../store/sqlite.js';
import type { Projector } from './projector.js';
import { checkpointName, outOfDate, ProjectionStep, versionName } from './step.js';

/** The log as the projection reads it: events after a position, and the last position. */
export interface LogReader {
  /** Up to `max` events after position `after`, in log order. */
  readAfter(after: bigint, max: number): RecordedEvent[];
  /** The last position, 0 for an empty log. */
  head(): bigint;
}

/** Events per transaction: live (a write waits for it) and in bulk (a rebuild, where throughput counts). */
const LIVE_CHUNK = 2_000;
const BULK_CHUNK = 20_000;
/** A projector this far behind the head catches up in bulk mode (search indexes built once at the end). */
const BULK_BEHIND = 20_000;
/**
 * Rows waiting for a search table's sync beyond which a step syncs it itself. FTS5 costs far less
 * a row in big batches (about 15 µs a row a hundred at a time, 7 µs five thousand at a time), and
 * a search tests each waiting row on its text, so this bounds what a search pays for the batching.
 */
const SEARCH_BACKLOG = 1_000;
/**
 * Events applied between two looks at that backlog (a count of each search table's waiting rows,
 * a fifth of a small step's fixed cost): an event seldom changes more than one searched row, and a
 * backlog past the bound meanwhile only makes searches test a few more rows.
 */
const BACKLOG_LOOK_EVERY = 250;
/**
 * Events in a live step from which a projector may hold its writes to the step's end and write
 * them in bigger pieces (Projector.startStep: the change feed packs a team's envelopes into blocks
 * without making each a row first). Below it a step is a few writes' group commit, each waiting
 * for it; from it, a backlog (an import's batches). The feed's holding costs one count of a
 * team's rows a step beyond what it saves (dispatcher/feed-table.ts), so the bound is low: in
 * steps of this size, one team's writes fill a block every fourth step.
 */
export const HELD_STEP = 64;

export interface StepOptions {
  /** Bring every search table up to date in this step's transaction, however few rows wait. */
  syncSearch?: boolean;
}

export interface StepResult {
  /** Events read from the log in this step (applied, or found applied by another process). */
  read: number;
  /** The position every projector has reached. */
  position: bigint;
  /** Whether the log holds nothing after it (as seen inside this step's transaction). */
  caughtUp: boolean;
  /** Whether the step brought every search table up to date (StepOptions.syncSearch). */
  searchSynced: boolean;
}

/**
 * The engine's step (step.ts) over the embedded read models in SQLite, fed from the log file in
 * chunks: each chunk is one transaction on the read database, holding every projector's changes
 * and its checkpoint. What it adds for SQLite: projector versions (prepare), bulk mode while far
 * behind, and the search tables' backlog.
 *
 * Several processes may feed one database (with NATS): each step takes the write lock first
 * (BEGIN IMMEDIATE), reads the checkpoints inside it and applies only what is after them, so no
 * event is applied twice or out of order whichever process gets there first.
 *
 * The projectors' async apply runs over the synchronous core, so a chunk's awaits are microtasks
 * only and nothing else uses the connection meanwhile.
 */
export class SqliteProjection {
  private readonly store: SqliteReadStore;
  private readonly engine: ProjectionStep;
  /**
   * The database's data_version as this projection's last step saw it (null: not yet): while it
   * stands, no other connection has committed since, so the checkpoints and bulk flags are what
   * that step left and are not read again. Another process feeding the same file (NATS), an
   * erasure's rewrite from the main thread or a WAL restart moves it, and the step reads them all.
   */
  private seenVersion: number | null = null;
  /**
   * Read models may be in bulk mode (this projection was behind, or another connection wrote
   * since it last looked): the next caught-up step looks at their flags and takes them out. Not
   * cleared until that step commits, so a rolled-back one leaves it for the retry.
   */
  private bulkMayBeOn = false;
  /** Events applied since the search backlog was last looked at. */
  private sinceBacklogLook = 0;

  /**
   * `bulk`: every step in bulk mode, however little is behind (a build from nothing: runtime/rebuild.ts).
   * `keyMark`: bumped after each committed step that applied an API-key event (api-key-mark.ts).
   * `store`: the store over `core` the projectors are given (the rebuild's, which knows its file's keys).
   * `heldFrom`: HELD_STEP unless given (tests and bench/projector.ts set it).
   * `keepBulk`: caught up, the read models stay in bulk mode: the caller ends it (an offline
   * rebuild, whose search indexes another thread builds meanwhile).
   */
  constructor(
    private readonly core: SqliteReadCore,
    private readonly projectors: Projector[],
    private readonly log: LogReader,
    private readonly options: { bulk?: boolean; keyMark?: ApiKeyMark; store?: SqliteReadStore; heldFrom?: number; keepBulk?: boolean } = {},
  ) {
    this.store = options.store ?? new SqliteReadStore(core);
    this.engine = new ProjectionStep(projectors);
  }

  /**
   * Lays out every collection and drops the read models whose schema version differs from the
   * code's (or that were never built): they are rebuilt from the log by the steps that follow.
   * Answers the names of those dropped.
   */
  prepare(): string[] {
    const rebuilt: string[] = [];
    this.core.begin();
    try {
      const stale = outOfDate(this.projectors, (name) => this.core.schemaVersion(name));
      for (const p of this.projectors) {
        if (stale.includes(p)) {
          for (const c of p.collections) this.core.dropCollection(c.name);
          p.reset?.();
          // Recorded now, in the drop's transaction: another process starting meanwhile must not drop again.
          this.core.setSchemaVersion(versionName(p), p.version);
          this.core.setCheckpoint(checkpointName(p), { commit: 0n, prepare: 0n });
          rebuilt.push(p.name);
        }
        for (const c of p.collections) this.core.define(c);
      }
      this.core.commit();
    } catch (err) {
      this.core.rollback();
      throw err;
    }
    return rebuilt;
  }

  /** The position every projector has reached, as stored. */
  async position(): Promise<bigint> {
    await this.engine.load(this.store);
    return this.engine.lowest().commit;
  }

  /**
   * Applies the next chunk of events (at most `max`) in one transaction with the checkpoints.
   * Throws a ProjectionFailure, having rolled everything of the chunk back, when a projector
   * throws: the caller may apply the `index` events before it, then retry the failing one.
   */
  async step(max?: number, options: StepOptions = {}): Promise<StepResult> {
    let keys = false;
    let version: number | null = null;
    let left = false;
    const { result } = await this.engine.run(this.store, async (tx) => {
      // Inside the transaction: no other writer can commit between this look and the step's commit.
      version = this.core.dataVersion();
      const othersWrote = version !== this.seenVersion;
      // Another connection (a process now gone, or this one before a restart) may have left read
      // models in bulk mode: look at the flags once caught up.
      if (othersWrote) this.bulkMayBeOn = true;
      if (othersWrote) await this.engine.load(tx);
      const from = this.engine.lowest().commit;
      const head = this.log.head();
      const bulk = this.enterBulk(head);
      const events = this.log.readAfter(from, Math.min(max ?? Infinity, bulk ? BULK_CHUNK : LIVE_CHUNK));
      const many = !bulk && events.length >= (this.options.heldFrom ?? HELD_STEP);
      for (const p of this.projectors) p.startStep?.(many);
      await this.engine.apply(events, tx);
      for (const p of this.projectors) p.endStep?.();
      keys = touchesApiKeys(events);
      // The search tables' backlog stays small whoever else syncs it (the projector thread, idle
      // between writes): searches test the waiting rows one by one.
      this.sinceBacklogLook += events.length;
      // Asked for, the sync runs in a catch-up too: the read models not in bulk mode keep noting
      // their changed rows, which must not pile up (a read model in bulk mode notes none).
      if (options.syncSearch || (!bulk && this.sinceBacklogLook >= BACKLOG_LOOK_EVERY)) {
        this.core.syncSearch(options.syncSearch ? 1 : SEARCH_BACKLOG);
        this.sinceBacklogLook = 0;
      }
      const last = events.length ? events[events.length - 1].position.commit : from;
      this.engine.advance({ commit: last, prepare: last });
      await this.engine.save(tx);
      const caughtUp = last >= head;
      if (caughtUp && this.bulkMayBeOn && !this.options.keepBulk) {
        this.leaveBulk();
        left = true;
      }
      return { read: events.length, position: this.engine.lowest().commit, caughtUp, searchSynced: options.syncSearch === true };
    });
    // Committed (a step rolled back throws before here): what it saw and left now holds.
    this.seenVersion = version;
    if (left) this.bulkMayBeOn = false;
    // Committed: a reader that looks now finds the keys as they are.
    if (keys) this.options.keyMark?.bump();
    return result;
  }

  /**
   * Read models far behind the head stop keeping their search and list indexes row by row until
   * caught up. Answers whether any is that far behind (its steps then take bigger chunks).
   */
  private enterBulk(head: bigint): boolean {
    const behind = this.options.bulk ? this.projectors : this.engine.behind(head, BULK_BEHIND);
    const names = behind.flatMap((p) => p.collections.map((c) => c.name)).filter((n) => !this.core.inBulk(n));
    if (names.length) this.core.beginBulk(names, { offline: this.options.bulk });
    if (behind.length) this.bulkMayBeOn = true;
    return behind.length > 0;
  }

  /** Builds the search indexes of every collection still in bulk mode: once, at the end of a catch-up. */
  private leaveBulk(): void {
    const names = this.projectors.flatMap((p) => p.collections.map((c) => c.name)).filter((n) => this.core.inBulk(n));
    if (names.length) this.core.endBulk(names, { offline: this.options.bulk });
  }
}
