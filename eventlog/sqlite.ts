import Database from 'better-sqlite3';
import { type AppendResult, type EventLog, type ExpectedRevision, type NewEvent, type SubscribeOptions, type Subscription, WrongExpectedRevision } from './port.js';
import { type Position, type RecordedEvent } from '../domain/shared/events.js';
import { COMMITS, type Committer, FOREIGN_UP_TO, makeCommitter, newMarks, type Outcome, OWN_LAST, type WireAppend, WriterThread } from './sqlite-writer.js';

interface Pending {
  /** The events serialised when the append is accepted, so one that cannot be fails alone, not its batch. */
  append: WireAppend;
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
}

interface Row {
  position: number | bigint;
  stream: string;
  revision: number | bigint;
  type: string;
  data: string;
  metadata: string;
}

export interface SqliteEventLogOptions {
  /** How often a follower looks for events written by another process on the same file. */
  pollMs?: number;
  /** Events read per batch while catching up. */
  batchSize?: number;
  /**
   * Commit on a thread of its own (the default for a file): the transaction and its fsync then
   * run beside the event loop, which goes on taking requests for the next batch meanwhile.
   * False commits on the calling thread. An in-memory database is always committed in place.
   */
  writerThread?: boolean;
}

/**
 * The embedded event log: one SQLite file in WAL mode with synchronous=FULL, so an append is
 * acknowledged only once it is durable on disk.
 *
 * Group commit: appends are queued and flushed on the next turn of the event loop in one
 * transaction, so every request that arrived meanwhile shares one fsync. Each append still
 * checks its own expected revision, against the rows earlier appends of the same batch wrote,
 * and fails alone. The writer thread commits together whatever batches reached it while it was
 * committing the previous ones, so its transactions grow with the load.
 *
 * Reads (streams, following, the head) use this thread's own connection; in WAL mode they never
 * wait for the writer.
 */
export class SqliteEventLog implements EventLog {
  private readonly db: Database.Database;
  private pending: Pending[] = [];
  private readonly writer: WriterThread | null;
  private readonly commitHere: Committer | null;
  /** The batches sent to the writer thread and not answered yet. */
  private readonly committing = new Set<Promise<void>>();
  private idleWaiters: Array<() => void> = [];
  private closing: Promise<void> | null = null;
  /** What the committer saw: its own last position, and the last one another writer appended. */
  private readonly marks = newMarks();
  private appended = 0;
  /**
   * The events this connection committed last, oldest first: followers in this process take them
   * from here instead of reading back (and parsing again) what was just written. Another
   * process's rows are never here, so a follower that finds no next position here reads the file.
   */
  private recent: RecordedEvent[] = [];
  private flushScheduled = false;
  /** Followers' wake-ups; `fromFile`: another process's rows are there, read the file for them. */
  private readonly listeners = new Set<(fromFile?: boolean) => void>();
  /** The highest position head() has reported: a higher one means another process wrote. */
  private seenHead = 0n;
  private closed = false;
  private readonly pollMs: number;
  private readonly batchSize: number;
  private readonly stmt: {
    readStream: Database.Statement<[string], Row>;
    readAfter: Database.Statement<[number | bigint, number], Row>;
    head: Database.Statement<[], { position: number | bigint | null }>;
    dataVersion: Database.Statement<[], bigint>;
  };
  /** The last settled position found to have nothing foreign after it, and data_version then. */
  private ownOnly: { after: bigint; version: bigint } | null = null;

  constructor(file: string, options: SqliteEventLogOptions = {}) {
    this.pollMs = options.pollMs ?? 50;
    this.batchSize = options.batchSize ?? 512;
    this.db = new Database(file);
    this.db.defaultSafeIntegers(true);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS events (
        position INTEGER PRIMARY KEY AUTOINCREMENT,
        stream   TEXT NOT NULL,
        revision INTEGER NOT NULL,
        type     TEXT NOT NULL,
        data     TEXT NOT NULL,
        metadata TEXT NOT NULL,
        UNIQUE (stream, revision)
      );
    `);
    this.stmt = {
      readStream: this.db.prepare('SELECT * FROM events WHERE stream = ? ORDER BY revision'),
      readAfter: this.db.prepare('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?'),
      head: this.db.prepare('SELECT MAX(position) AS position FROM events'),
      // Changes whenever another connection (the writer thread, another process) commits.
      dataVersion: this.db.prepare<[], bigint>('PRAGMA data_version').pluck(),
    };
    const threaded = (options.writerThread ?? true) && file !== ':memory:' && file !== '';
    this.writer = threaded ? new WriterThread(file, this.marks) : null;
    this.commitHere = threaded ? null : makeCommitter(this.db, this.marks);
  }

  /**
   * Resolves once no batch is on the writer thread (at once when none is), so the thread holds no
   * write lock: another writer on `database` in this process then does not wait for it. The log
   * sends its next batch on a later turn of the event loop, never in between.
   */
  writerIdle(): Promise<void> {
    if (this.committing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Why appends can no longer succeed (the writer thread stopped), or null. */
  failure(): Error | null {
    return this.writer?.failure ?? null;
  }

  /** Batches on the writer thread, not answered yet. */
  get commitsInFlight(): number {
    return this.committing.size;
  }

  /** Transactions committed (each one fsync), and the appends they carried. */
  get stats(): { commits: number; appends: number } {
    return { commits: Number(Atomics.load(this.marks, COMMITS)), appends: this.appended };
  }

  /** How the connection that commits appends is set up: WAL and synchronous=FULL (2) make them durable. */
  async writerSettings(): Promise<{ journalMode: string; synchronous: number }> {
    if (this.writer) return this.writer.settings();
    return { journalMode: String(this.db.pragma('journal_mode', { simple: true })), synchronous: Number(this.db.pragma('synchronous', { simple: true })) };
  }

  /** The underlying database, for other embedded stores that keep their tables in the same file. */
  get database(): Database.Database {
    return this.db;
  }

  append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new Error('event log is closed'));
    if (events.length === 0) return Promise.reject(new Error('append needs at least one event'));
    let rows: WireAppend['events'];
    try {
      rows = events.map((e) => ({ type: e.type, data: JSON.stringify(e.data), metadata: JSON.stringify(e.metadata) }));
    } catch (err) {
      return Promise.reject(err);
    }
    for (const r of rows) {
      // JSON.stringify(undefined) is undefined: such an event could be stored but never read back.
      if (typeof r.type !== 'string' || typeof r.data !== 'string' || typeof r.metadata !== 'string')
        return Promise.reject(new TypeError(`an event appended to ${stream} has no type, data or metadata that JSON can hold`));
      // NUL separates the parts of a batch on its way to the writer thread (encodeBatch).
      if (r.type.includes('\u0000')) return Promise.reject(new TypeError('event type names cannot hold NUL characters'));
    }
    if (stream.includes('\u0000')) return Promise.reject(new TypeError('stream names cannot hold NUL characters'));
    return new Promise((resolve, reject) => {
      this.pending.push({ append: { stream, events: rows, expected }, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    // Someone waits for the writer thread to be idle (webhook bookkeeping on this file): hold the
    // next batch until it has had its turn, or under steady load it might never come.
    if (this.writer && this.idleWaiters.length > 0 && this.committing.size > 0 && !this.closed) return;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const appends = batch.map((p) => p.append);
    if (this.writer) {
      // Sent at once: the thread puts whatever reaches it while it commits into its next commit.
      const done: Promise<void> = this.writer
        .commit(appends)
        .then(
          (outcomes) => this.committed(batch, outcomes),
          (err) => this.failed(batch, err),
        )
        // Whatever went wrong after the commit, no append is left waiting (settled ones stay so).
        .catch((err) => this.failed(batch, err));
      this.committing.add(done);
      void done.then(() => {
        this.committing.delete(done);
        if (this.committing.size > 0) return;
        for (const w of this.idleWaiters.splice(0)) w();
        // After the waiters, which run in the microtasks before this turn ends.
        if (this.pending.length && !this.flushScheduled) {
          this.flushScheduled = true;
          setImmediate(() => this.flush());
        }
      });
      return;
    }
    let outcomes: Outcome[];
    try {
      outcomes = this.commitHere!(appends);
    } catch (err) {
      this.failed(batch, err);
      return;
    }
    this.committed(batch, outcomes);
  }

  /** The commit itself failed (disk full, I/O error): nothing of the batch is durable. */
  private failed(batch: Pending[], err: unknown): void {
    for (const p of batch) p.reject(err);
  }

  private committed(batch: Pending[], outcomes: Outcome[]): void {
    this.appended += batch.length;
    const written: RecordedEvent[] = [];
    batch.forEach((p, i) => {
      const o = outcomes[i];
      const { stream, events, expected } = p.append;
      if ('conflict' in o) {
        p.reject(new WrongExpectedRevision(stream, expected, o.actual));
        return;
      }
      // The append's events took consecutive positions and revisions, ending at these.
      const n = BigInt(events.length);
      events.forEach((e, k) => {
        const back = n - 1n - BigInt(k);
        written.push(toRecorded({ position: o.position - back, stream, revision: o.revision - back, type: e.type, data: e.data, metadata: e.metadata }));
      });
    });
    this.remember(written);
    batch.forEach((p, i) => {
      const o = outcomes[i];
      if (!('conflict' in o)) p.resolve({ nextExpectedRevision: o.revision, position: { commit: o.position, prepare: o.position } });
    });
    for (const l of this.listeners) l();
  }

  private remember(events: RecordedEvent[]): void {
    this.recent.push(...events);
    if (this.recent.length > 4096) this.recent = this.recent.slice(-2048);
  }

  /** The committed events right after `after`, if this connection wrote them; else null. */
  private fromMemory(after: bigint, max: number): RecordedEvent[] | null {
    const r = this.recent;
    let lo = 0;
    let hi = r.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (r[mid].position.commit <= after) lo = mid + 1;
      else hi = mid;
    }
    if (lo >= r.length || r[lo].position.commit !== after + 1n) return null;
    const out = [r[lo]];
    for (let i = lo + 1; i < r.length && out.length < max && r[i].position.commit === r[i - 1].position.commit + 1n; i++) out.push(r[i]);
    return out;
  }

  async readStream(stream: string): Promise<RecordedEvent[]> {
    return this.stmt.readStream.all(stream).map(toRecorded);
  }

  // Both served by the (stream, revision) index; prepared on first use.
  private tailStmt?: Database.Statement<[string, number], Row>;
  private untilStmt?: Database.Statement<[string, bigint], Row>;

  async readStreamBackwards(stream: string, maxCount: number): Promise<RecordedEvent[]> {
    this.tailStmt ??= this.db.prepare('SELECT * FROM events WHERE stream = ? ORDER BY revision DESC LIMIT ?');
    return this.tailStmt.all(stream, maxCount).map(toRecorded);
  }

  async readStreamUntil(stream: string, position: Position): Promise<RecordedEvent[]> {
    this.untilStmt ??= this.db.prepare('SELECT * FROM events WHERE stream = ? AND position <= ? ORDER BY revision');
    return this.untilStmt.all(stream, position.commit).map(toRecorded);
  }

  async head(): Promise<Position | null> {
    const p = this.headPosition();
    return p === null ? null : { commit: p, prepare: p };
  }

  private headPosition(): bigint | null {
    const r = this.stmt.head.get();
    if (!r || r.position === null) return null;
    const p = BigInt(r.position);
    // Another process appended: wake the followers now rather than at their next poll, so a read
    // that settles to the head (read-your-writes across processes) waits milliseconds. This
    // process's own commits wake them as they are answered, from memory.
    if (p > this.seenHead) {
      this.seenHead = p;
      if (p > Atomics.load(this.marks, OWN_LAST)) for (const l of this.listeners) l(true);
    }
    return p;
  }

  /**
   * Whether every event after `position` was appended through this log: the commits on its
   * writer thread count, even before they are answered here. One pragma on this thread, and the
   * head query only when another connection has committed since the last look.
   */
  ownWritesOnlySince(position: Position | null): boolean {
    const after = position ? position.commit : 0n;
    // Nothing committed through another connection since the last check found none: the same
    // answer, without reading the head (a read transaction costs more than the pragma).
    const version = this.stmt.dataVersion.get()!;
    if (this.ownOnly && this.ownOnly.after === after && this.ownOnly.version === version) return true;
    const head = this.headPosition() ?? 0n;
    const own = head <= after || (head <= Atomics.load(this.marks, OWN_LAST) && Atomics.load(this.marks, FOREIGN_UP_TO) <= after);
    this.ownOnly = own ? { after, version } : null;
    return own;
  }

  subscribe(from: Position | null, handler: (e: RecordedEvent) => Promise<void> | void, options: SubscribeOptions = {}): Subscription {
    let after = from ? from.commit : 0n;
    let stopped = false;
    let wake: (() => void) | null = null;
    // Set by a wake-up that arrives while the loop is reading, so that it reads again at once.
    let poked = false;
    // Set by a wake-up for another process's rows: the next read is from the file.
    let fileWanted = false;
    const listener = (fromFile?: boolean) => {
      poked = true;
      if (fromFile) fileWanted = true;
      wake?.();
    };
    this.listeners.add(listener);
    const loop = (async () => {
      while (!stopped && !this.closed) {
        let rows: RecordedEvent[];
        // Caught up: a short read of the file, or a run from memory to the last event this log
        // committed. Another process's rows after that are found by the next poll, or at once
        // when a read settles to the head (head() wakes the followers to read the file).
        let caughtUp = false;
        poked = false;
        try {
          const mine = fileWanted ? null : this.fromMemory(after, this.batchSize);
          fileWanted = false;
          rows = mine ?? this.stmt.readAfter.all(after, this.batchSize).map(toRecorded);
          caughtUp = mine ? mine[mine.length - 1] === this.recent[this.recent.length - 1] : rows.length < this.batchSize;
        } catch (err) {
          if (this.closed) break;
          options.onError?.(err);
          throw err;
        }
        for (const e of rows) {
          if (stopped) break;
          if (!options.filter || options.filter(e.type)) await handler(e);
          after = e.position.commit;
        }
        if (rows.length > 0 && options.onCheckpoint && !stopped) await options.onCheckpoint({ commit: after, prepare: after });
        if (caughtUp && !stopped && !poked) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(done, this.pollMs);
            function done() {
              clearTimeout(timer);
              wake = null;
              resolve();
            }
            wake = done;
          });
        }
      }
    })();
    loop.catch((err) => options.onError?.(err));
    return {
      stop: async () => {
        stopped = true;
        wake?.();
        this.listeners.delete(listener);
        await loop.catch(() => undefined);
      },
    };
  }

  close(): Promise<void> {
    // A second call waits for the first: everything accepted is on disk when either returns.
    return (this.closing ??= this.closeOnce());
  }

  private async closeOnce(): Promise<void> {
    this.closed = true;
    // Whatever was accepted is written before the file closes.
    this.flush();
    await Promise.all(this.committing);
    await this.writer?.close();
    for (const l of this.listeners) l();
    this.listeners.clear();
    this.db.close();
  }
}

function toRecorded(row: Row): RecordedEvent {
  const position = BigInt(row.position);
  return {
    stream: row.stream,
    revision: BigInt(row.revision),
    position: { commit: position, prepare: position },
    type: row.type,
    data: JSON.parse(row.data),
    metadata: JSON.parse(row.metadata),
  };
}
