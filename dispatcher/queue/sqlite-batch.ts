import type Database from 'better-sqlite3';

/**
 * Group commit for the webhook tables. better-sqlite3 is synchronous, so every commit blocks the
 * event loop; writes queued during one turn (attempt records, completions, enqueues) share one
 * transaction instead.
 *
 * These commits skip the fsync (synchronous=NORMAL: in WAL mode they survive a process crash, and
 * a power cut can only lose the last few). Delivery is at least once, so that loses nothing: a
 * lost completion is an attempt made again, a lost enqueue (and its checkpoint, in the same
 * transaction) is replayed from the log. The event log's appends keep synchronous=FULL: they commit
 * on the log's writer thread, with its own connection (or, committing in place, on this one, with
 * the setting restored before anything else can commit).
 *
 * When the log's writer thread shares the file, a batch waits until that thread holds no batch
 * (see shareFileWith): SQLite would otherwise wait for its write lock in the busy handler, which
 * sleeps whole milliseconds with the event loop blocked.
 */
export class SqliteBatcher {
  private pending: Array<{ fn: () => void; resolve: () => void; reject: (e: unknown) => void }> = [];
  private scheduled = false;

  constructor(private readonly db: Database.Database) {}

  run(fn: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ fn, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flushWhenClear());
      }
    });
  }

  private async flushWhenClear(): Promise<void> {
    const clear = writers.get(this.db);
    // Resolved in a microtask once the writer thread's last batch is answered, before the log
    // sends another (it sends on the next turn): this transaction then has the lock to itself.
    if (clear) await clear();
    this.flush();
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (!batch.length) return;
    if (!this.db.open) {
      for (const b of batch) b.reject(new Error('database is closed'));
      return;
    }
    const errors = new Map<number, unknown>();
    const durability = this.db.pragma('synchronous', { simple: true });
    try {
      this.db.pragma('synchronous = NORMAL');
      this.db.transaction(() => {
        batch.forEach((b, i) => {
          try {
            b.fn();
          } catch (err) {
            errors.set(i, err);
          }
        });
      })();
    } catch (err) {
      for (const b of batch) b.reject(err);
      return;
    } finally {
      this.db.pragma(`synchronous = ${Number(durability)}`);
    }
    batch.forEach((b, i) => (errors.has(i) ? b.reject(errors.get(i)) : b.resolve()));
  }
}

const batchers = new WeakMap<Database.Database, SqliteBatcher>();
const writers = new WeakMap<Database.Database, () => Promise<void>>();

/**
 * Another writer in this process commits to the same file on a thread of its own (the event
 * log's writer thread); `idle` resolves when it holds no batch. Batches on `db` wait for that.
 */
export function shareFileWith(db: Database.Database, idle: () => Promise<void>): void {
  writers.set(db, idle);
}

/** One batcher per database, shared by the queue and the delivery log. */
export function batcherFor(db: Database.Database): SqliteBatcher {
  let b = batchers.get(db);
  if (!b) batchers.set(db, (b = new SqliteBatcher(db)));
  return b;
}
