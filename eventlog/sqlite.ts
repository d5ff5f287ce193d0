import type { MessagePort } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { type AppendOrder, type AppendResult, type EventLog, type ExpectedRevision, type NewEvent, type SubscribeOptions, type Subscription } from './port.js';
import { type Position, type RecordedEvent } from '../domain/shared/events.js';
import { COMMITS, FOREIGN_UP_TO, makeCommitter, newMarks, OWN_LAST } from './sqlite-committer.js';
import { type Given, openLogFile, ROW, type Row, toRecorded } from './sqlite-file.js';
import { rewriteStreamRows } from './erase.js';
import { Followers } from './sqlite-follow.js';
import { jsonGivesBack } from './json-exact.js';
import { GroupCommit } from './sqlite-group-commit.js';
import { RecentEvents } from './sqlite-recent.js';
import type { WireAppend } from './sqlite-wire.js';
import { WriterThread } from './sqlite-writer.js';

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
 * acknowledged only once it is durable on disk. Appends are group-committed (GroupCommit), by
 * default on a writer thread of their own (sqlite-writer-thread.js).
 *
 * Reads (streams, following, the head) use this thread's own connection; in WAL mode they never
 * wait for the writer.
 */
export class SqliteEventLog implements EventLog {
  private readonly db: Database.Database;
  private readonly writer: WriterThread | null;
  private readonly commits: GroupCommit;
  private readonly followers: Followers;
  private closing: Promise<void> | null = null;
  /** What the committer saw: its own last position, and the last one another writer appended. */
  private readonly marks = newMarks();
  /** The highest position head() has reported: a higher one means another process wrote. */
  private seenHead = 0n;
  private closed = false;
  private readonly recent: RecentEvents;
  private readonly stmt: {
    readStream: Database.Statement<[string], Row>;
    readAfter: Database.Statement<[number | bigint, number], Row>;
    head: Database.Statement<[], { position: number | bigint | null }>;
    dataVersion: Database.Statement<[], bigint>;
  };
  /** The last settled position found to have nothing foreign after it, and data_version then. */
  private ownOnly: { after: bigint; version: bigint } | null = null;

  constructor(file: string, options: SqliteEventLogOptions = {}) {
    this.db = openLogFile(file);
    this.stmt = {
      readStream: this.db.prepare(`SELECT ${ROW} FROM events WHERE stream = ? ORDER BY revision`),
      readAfter: this.db.prepare(`SELECT ${ROW} FROM events WHERE position > ? ORDER BY position LIMIT ?`),
      head: this.db.prepare('SELECT MAX(position) AS position FROM events'),
      // Changes whenever another connection (the writer thread, another process) commits.
      dataVersion: this.db.prepare<[], bigint>('PRAGMA data_version').pluck(),
    };
    const recent = (this.recent = new RecentEvents());
    this.followers = new Followers(
      { readAfter: (after, max) => this.stmt.readAfter.all(after, max).map(toRecorded), isClosed: () => this.closed },
      recent,
      { pollMs: options.pollMs ?? 50, batchSize: options.batchSize ?? 512 },
    );
    const threaded = (options.writerThread ?? true) && file !== ':memory:' && file !== '';
    this.writer = threaded ? new WriterThread(file, this.marks) : null;
    this.commits = new GroupCommit(this.writer ?? makeCommitter(this.db, this.marks), recent, this.followers);
  }

  /** Why appends can no longer succeed (the writer thread stopped), or null. */
  failure(): Error | null {
    return this.writer?.failure ?? null;
  }

  /** The port's tellCommits (port.ts), from the writer thread; false where the log commits on the calling thread. */
  async tellCommits(port: MessagePort): Promise<boolean> {
    if (!this.writer) return false;
    await this.writer.tellCommits(port);
    return true;
  }

  /** Batches on the writer thread, not answered yet. */
  get commitsInFlight(): number {
    return this.commits.inFlight;
  }

  /** Transactions committed (each one fsync), and the appends they carried. */
  get stats(): { commits: number; appends: number } {
    return { commits: Number(Atomics.load(this.marks, COMMITS)), appends: this.commits.appends };
  }

  /** How the connection that commits appends is set up: WAL and synchronous=FULL (2) make them durable. */
  async writerSettings(): Promise<{ journalMode: string; synchronous: number }> {
    if (this.writer) return this.writer.settings();
    return { journalMode: String(this.db.pragma('journal_mode', { simple: true })), synchronous: Number(this.db.pragma('synchronous', { simple: true })) };
  }

  /** The underlying database: where a data directory from before webhooks.sqlite keeps its webhook tables (runtime/webhooks.ts moves them). */
  get database(): Database.Database {
    return this.db;
  }

  /** Its group commit heeds append's `order` (GroupCommit.add). */
  readonly ordersAppends = true;

  append(stream: string, events: NewEvent[], expected: ExpectedRevision, order?: AppendOrder): Promise<AppendResult> {
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
    // Checking that the JSON gives the objects back costs a fraction of parsing the text back.
    const given: Given[] = events.map((e) => ({
      data: jsonGivesBack(e.data) ? e.data : undefined,
      metadata: jsonGivesBack(e.metadata) ? e.metadata : undefined,
    }));
    return this.commits.add({ stream, events: rows, expected }, given, order);
  }

  async readStream(stream: string): Promise<RecordedEvent[]> {
    return this.stmt.readStream.all(stream).map(toRecorded);
  }

  // All three served by the (stream, revision) index; prepared on first use.
  private tailStmt?: Database.Statement<[string, number], Row>;
  private untilStmt?: Database.Statement<[string, bigint], Row>;
  private revisionStmt?: Database.Statement<[string], number | bigint | null>;

  async streamRevision(stream: string): Promise<bigint | null> {
    this.revisionStmt ??= this.db.prepare<[string], number | bigint | null>('SELECT MAX(revision) FROM events WHERE stream = ?').pluck();
    const r = this.revisionStmt.get(stream);
    return r === null || r === undefined ? null : BigInt(r);
  }

  async readStreamBackwards(stream: string, maxCount: number): Promise<RecordedEvent[]> {
    this.tailStmt ??= this.db.prepare(`SELECT ${ROW} FROM events WHERE stream = ? ORDER BY revision DESC LIMIT ?`);
    return this.tailStmt.all(stream, maxCount).map(toRecorded);
  }

  async readStreamUntil(stream: string, position: Position): Promise<RecordedEvent[]> {
    this.untilStmt ??= this.db.prepare(`SELECT ${ROW} FROM events WHERE stream = ? AND position <= ? ORDER BY revision`);
    return this.untilStmt.all(stream, position.commit).map(toRecorded);
  }

  private teamStmt?: Database.Statement<[number, bigint, number], Row>;

  async readTeam(team: number, from: Position | null, limit: number, inclusive = false): Promise<RecordedEvent[]> {
    // Served by the (team, position) index: other teams' rows are never visited. Positions are
    // whole numbers here, so "at or after p" is "after p - 1".
    this.teamStmt ??= this.db.prepare(`SELECT ${ROW} FROM events WHERE team = ? AND position > ? ORDER BY position LIMIT ?`);
    const after = from ? from.commit - (inclusive ? 1n : 0n) : 0n;
    return this.teamStmt.all(team, after, limit).map(toRecorded);
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
      if (p > Atomics.load(this.marks, OWN_LAST)) this.followers.wake(true);
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

  async countAfter(position: Position | null): Promise<number> {
    const count = this.db.prepare<[bigint], number | bigint>('SELECT COUNT(*) FROM events WHERE position > ?').pluck();
    return Number(count.get(position ? position.commit : 0n) ?? 0);
  }

  /** The port's rewriteStream: on this thread's connection, secure_delete on, then the WAL truncated (erase.ts). */
  async rewriteStream(stream: string, data: (e: RecordedEvent) => Record<string, unknown>): Promise<number> {
    if (this.closed) throw new Error('event log is closed');
    const n = await rewriteStreamRows(this.db, stream, data, (name) => this.stmt.readStream.all(name).map(toRecorded));
    this.recent.rewrite(stream, data);
    return n;
  }

  subscribe(from: Position | null, handler: (e: RecordedEvent) => Promise<void> | void, options: SubscribeOptions = {}): Subscription {
    return this.followers.follow(from, handler, options);
  }

  close(): Promise<void> {
    // A second call waits for the first: everything accepted is on disk when either returns.
    return (this.closing ??= this.closeOnce());
  }

  private async closeOnce(): Promise<void> {
    this.closed = true;
    // Whatever was accepted is written before the file closes.
    await this.commits.close();
    await this.writer?.close();
    this.followers.release();
    this.db.close();
  }
}
