import Database from 'better-sqlite3';
import {
  ANY,
  type AppendResult,
  type EventLog,
  type ExpectedRevision,
  type NewEvent,
  NO_STREAM,
  type Position,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
  WrongExpectedRevision,
} from './port.js';

interface Pending {
  stream: string;
  /** Serialised when the append is accepted, so one that cannot be fails alone, not its batch. */
  events: Array<{ type: string; data: string; metadata: string }>;
  expected: ExpectedRevision;
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
}

/**
 * The embedded event log: one SQLite file in WAL mode with synchronous=FULL, so an append is
 * acknowledged only once it is durable on disk.
 *
 * Group commit: appends are queued and flushed on the next turn of the event loop in one
 * transaction, so every request that arrived meanwhile shares one fsync. Each append still
 * checks its own expected revision, against the rows earlier appends of the same batch wrote,
 * and fails alone.
 */
export class SqliteEventLog implements EventLog {
  private readonly db: Database.Database;
  private pending: Pending[] = [];
  /** Rows the current flush inserted; handed to this process's followers once committed. */
  private written: Row[] = [];
  /**
   * The events this connection committed last, oldest first: followers in this process take them
   * from here instead of reading back (and parsing again) what was just written. Another
   * process's rows are never here, so a follower that finds no next position here reads the file.
   */
  private recent: RecordedEvent[] = [];
  private flushScheduled = false;
  private readonly listeners = new Set<() => void>();
  /** The highest position head() has reported: a higher one means another process wrote. */
  private seenHead = 0n;
  private closed = false;
  private readonly pollMs: number;
  private readonly batchSize: number;
  private readonly stmt: {
    streamHead: Database.Statement<[string], { revision: number | bigint }>;
    insert: Database.Statement<[string, number | bigint, string, string, string]>;
    readStream: Database.Statement<[string], Row>;
    readAfter: Database.Statement<[number | bigint, number], Row>;
    head: Database.Statement<[], { position: number | bigint | null }>;
    dataVersion: Database.Statement<[], number | bigint>;
  };

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
      streamHead: this.db.prepare('SELECT revision FROM events WHERE stream = ? ORDER BY revision DESC LIMIT 1'),
      insert: this.db.prepare('INSERT INTO events (stream, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?)'),
      readStream: this.db.prepare('SELECT * FROM events WHERE stream = ? ORDER BY revision'),
      readAfter: this.db.prepare('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?'),
      head: this.db.prepare('SELECT MAX(position) AS position FROM events'),
      dataVersion: this.db.prepare<[], number | bigint>('PRAGMA data_version').pluck(),
    };
  }

  /** The underlying database, for other embedded stores that keep their tables in the same file. */
  get database(): Database.Database {
    return this.db;
  }

  append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new Error('event log is closed'));
    if (events.length === 0) return Promise.reject(new Error('append needs at least one event'));
    let rows: Pending['events'];
    try {
      rows = events.map((e) => ({ type: e.type, data: JSON.stringify(e.data), metadata: JSON.stringify(e.metadata) }));
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      this.pending.push({ stream, events: rows, expected, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const outcomes: Array<{ ok: AppendResult } | { err: unknown }> = [];
    this.written = [];
    try {
      // IMMEDIATE takes the write lock before the revision checks read: with another process on
      // the file, a deferred transaction that read first fails at once with SQLITE_BUSY
      // (stale snapshot) instead of waiting out busy_timeout.
      this.db
        .transaction(() => {
          for (const p of batch) outcomes.push(this.write(p));
        })
        .immediate();
    } catch (err) {
      // The commit itself failed (disk full, I/O error): nothing of the batch is durable.
      this.written = [];
      for (const p of batch) p.reject(err);
      return;
    }
    this.remember(this.written.map(toRecorded));
    this.written = [];
    batch.forEach((p, i) => {
      const o = outcomes[i];
      if ('ok' in o) p.resolve(o.ok);
      else p.reject(o.err);
    });
    for (const l of this.listeners) l();
  }

  private write(p: Pending): { ok: AppendResult } | { err: unknown } {
    const head = this.stmt.streamHead.get(p.stream);
    const actual = head ? BigInt(head.revision) : null;
    const ok =
      p.expected === ANY ||
      (p.expected === NO_STREAM && actual === null) ||
      (typeof p.expected === 'bigint' && actual === p.expected);
    if (!ok) return { err: new WrongExpectedRevision(p.stream, p.expected, actual) };
    let revision = actual ?? -1n;
    let position = 0n;
    for (const e of p.events) {
      revision += 1n;
      const r = this.stmt.insert.run(p.stream, revision, e.type, e.data, e.metadata);
      position = BigInt(r.lastInsertRowid);
      this.written.push({ position, stream: p.stream, revision, type: e.type, data: e.data, metadata: e.metadata });
    }
    return { ok: { nextExpectedRevision: revision, position: { commit: position, prepare: position } } };
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

  /** SQLite's data_version: it changes only when another connection commits to the file. */
  foreignWriteToken(): number {
    return Number(this.stmt.dataVersion.get());
  }

  async head(): Promise<Position | null> {
    const r = this.stmt.head.get();
    if (!r || r.position === null) return null;
    const p = BigInt(r.position);
    // Another process appended: wake the followers now rather than at their next poll, so a
    // read that settles to the head (read-your-writes across processes) waits milliseconds.
    if (p > this.seenHead) {
      this.seenHead = p;
      for (const l of this.listeners) l();
    }
    return { commit: p, prepare: p };
  }

  subscribe(from: Position | null, handler: (e: RecordedEvent) => Promise<void> | void, options: SubscribeOptions = {}): Subscription {
    let after = from ? from.commit : 0n;
    let stopped = false;
    let wake: (() => void) | null = null;
    // Set by a wake-up that arrives while the loop is reading, so that it reads again at once.
    let poked = false;
    const listener = () => {
      poked = true;
      wake?.();
    };
    this.listeners.add(listener);
    const loop = (async () => {
      while (!stopped && !this.closed) {
        let rows: RecordedEvent[];
        // Only a short read of the file means caught up: a run from memory may be followed by
        // another process's rows.
        let caughtUp = false;
        poked = false;
        try {
          const mine = this.fromMemory(after, this.batchSize);
          rows = mine ?? this.stmt.readAfter.all(after, this.batchSize).map(toRecorded);
          caughtUp = !mine && rows.length < this.batchSize;
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

  async close(): Promise<void> {
    if (this.closed) return;
    // Whatever was accepted is written before the file closes.
    if (this.pending.length) this.flush();
    this.closed = true;
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
