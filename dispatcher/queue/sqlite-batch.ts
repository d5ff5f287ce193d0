import type Database from 'better-sqlite3';

/**
 * Group commit for the webhook tables. better-sqlite3 is synchronous, so every commit blocks the
 * event loop; writes queued during one turn (attempt records, completions, enqueues) share one
 * transaction instead.
 *
 * These commits skip the fsync (synchronous=NORMAL: in WAL mode they survive a process crash, and
 * a power cut can only lose the last few). Delivery is at least once, so that loses nothing: a
 * lost completion is an attempt made again, a lost enqueue (and its checkpoint, in the same
 * transaction) is replayed from the log. The webhook database is opened at NORMAL; on a connection
 * set to more (a file shared with other tables), only these transactions run at NORMAL, the
 * connection's own setting restored right after, before anything else can commit on it.
 *
 * When another writer in this process takes the same file's write lock from a thread of its own
 * (the WAL checkpointer's RESTART), a batch waits until it is done (see shareFileWith): SQLite
 * would otherwise wait for the lock in its busy handler, which sleeps whole milliseconds with the
 * event loop blocked.
 */
export class SqliteBatcher {
  private pending: Entry[] = [];
  private scheduled = false;
  /** Every write this batcher was given, by the promise it answered, until that is collected. */
  private readonly entries = new WeakMap<Promise<void>, Entry>();

  /** The connection's own synchronous setting, read once: only the batcher's transactions change it. */
  private readonly durability: number;

  constructor(private readonly db: Database.Database) {
    this.durability = Number(db.pragma('synchronous', { simple: true }));
  }

  /**
   * Queues `fn` for the next group commit. With `after` (a promise this batcher returned), `fn`
   * runs only if that write succeeded; when both are queued in the same turn they share the
   * transaction (one commit instead of two, and `fn` is never committed without the other).
   */
  run(fn: () => void, after?: Promise<void>): Promise<void> {
    const first = after && this.entries.get(after);
    if (after && !first) return after.then(() => this.run(fn));
    if (first?.state === 'failed') return Promise.reject(first.error);
    // Its failure is this write's failure, reported through the promise returned here.
    after?.catch(() => {});
    let entry!: Entry;
    const promise = new Promise<void>((resolve, reject) => {
      entry = { fn, resolve, reject, after: first?.state === 'queued' ? first : undefined, state: 'queued', error: undefined };
    });
    this.entries.set(promise, entry);
    this.pending.push(entry);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => void this.flushWhenClear());
    }
    return promise;
  }

  private async flushWhenClear(): Promise<void> {
    const other = writers.get(this.db);
    // The other writer promises to take the lock again no sooner than the next turn of the event
    // loop (see shareFileWith): this transaction, begun in the same turn, has it to itself.
    if (other) await other.idle();
    if (this.flush()) other?.committed?.();
  }

  /** Commits the pending writes; answers whether it committed any. */
  private flush(): boolean {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (!batch.length) return false;
    if (!this.db.open) {
      for (const b of batch) fail(b, new Error('database is closed'));
      return false;
    }
    // NORMAL (1) or less already: nothing to change, nor to restore.
    const lower = this.durability > 1;
    try {
      if (lower) this.db.pragma('synchronous = NORMAL');
      this.db.transaction(() => {
        for (const b of batch) {
          // Entries run in order, so a write's `after` has already run (or failed) by now.
          if (b.after?.state === 'failed') {
            b.state = 'failed';
            b.error = b.after.error;
            continue;
          }
          try {
            b.fn();
          } catch (err) {
            b.state = 'failed';
            b.error = err;
          }
        }
      })();
    } catch (err) {
      for (const b of batch) fail(b, err);
      return false;
    } finally {
      if (lower) this.db.pragma(`synchronous = ${this.durability}`);
    }
    for (const b of batch) {
      if (b.state === 'failed') b.reject(b.error);
      else {
        b.state = 'committed';
        b.resolve();
      }
    }
    return true;
  }
}

interface Entry {
  fn: () => void;
  resolve: () => void;
  reject: (e: unknown) => void;
  /** A write queued before this one in the same batch, which must succeed for this one to run. */
  after: Entry | undefined;
  state: 'queued' | 'committed' | 'failed';
  error: unknown;
}

function fail(entry: Entry, error: unknown): void {
  entry.state = 'failed';
  entry.error = error;
  entry.reject(error);
}

const batchers = new WeakMap<Database.Database, SqliteBatcher>();
const writers = new WeakMap<Database.Database, { idle: () => Promise<void>; committed?: () => unknown }>();

/**
 * Another writer in this process takes the write lock on the same file as `db` from a thread of
 * its own (the composition root passes the WAL checkpointer's). `idle` resolves, in a microtask,
 * once that writer holds no write lock, and it takes the lock again no sooner than the next turn of
 * the event loop. Batches on `db` wait for that, then commit at once. `committed`, where given, is
 * told after each of their commits (the checkpointer checkpoints the WAL for them on its thread).
 */
export function shareFileWith(db: Database.Database, idle: () => Promise<void>, committed?: () => unknown): void {
  writers.set(db, { idle, committed });
}

/** One batcher per database, shared by the queue and the delivery log. */
export function batcherFor(db: Database.Database): SqliteBatcher {
  let b = batchers.get(db);
  if (!b) batchers.set(db, (b = new SqliteBatcher(db)));
  return b;
}
