import Database from 'better-sqlite3';
import type { EventMetadata, Position, RecordedEvent } from '../domain/shared/events.js';

/** A row of the events table, integers read as bigints (safeIntegers) or numbers. */
export interface Row {
  position: number | bigint;
  stream: string;
  revision: number | bigint;
  type: string;
  data: string;
  metadata: string;
}

/** A row's stored columns: not `*`, which would compute the generated `team` for every row read. */
export const ROW = 'position, stream, revision, type, data, metadata';

/**
 * Opens (and on first use creates) the log's file on this thread: WAL, so reads never wait for
 * the writer, and synchronous=FULL, so whatever commits on this connection is durable when
 * acknowledged. The writer thread opens its own connection with the same settings.
 */
export function openLogFile(file: string): Database.Database {
  const db = new Database(file);
  db.defaultSafeIntegers(true);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  // Freed bytes are zeroed, so an erasure's rewrite leaves no old value in free space (decisions.md §17).
  db.pragma('secure_delete = ON');
  db.exec(`
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
  addTeamIndex(db);
  return db;
}

/**
 * The change feed reads one team's events without scanning the others' (decisions.md §10): a
 * `team` column, computed by SQLite from the metadata as each row is inserted (so the writer
 * thread's insert is unchanged), and an index on (team, position). A log written before this
 * gains both at its first open; building the index fills it for every existing row, once.
 */
function addTeamIndex(db: Database.Database): void {
  const columns = db.prepare<[], { name: string }>('PRAGMA table_xinfo(events)').all();
  if (!columns.some((c) => c.name === 'team'))
    db.exec("ALTER TABLE events ADD COLUMN team INTEGER GENERATED ALWAYS AS (json_extract(metadata, '$.team')) VIRTUAL");
  db.exec('CREATE INDEX IF NOT EXISTS events_team_position ON events (team, position)');
}

/**
 * An appended event's data and metadata as its caller gave them, each where JSON gives it back as
 * it is (json-exact.ts), else undefined: the log's followers are handed these objects instead of
 * the parsed text. Shared, not copied: no follower writes to an event it is handed (they were
 * already handed one object between them), and a command does not change its events once appended.
 */
export interface Given {
  data?: Record<string, unknown>;
  metadata?: EventMetadata;
}

/** An event as the log holds it. */
export function toRecorded(row: Row): RecordedEvent {
  return toRecordedGiven(row, undefined);
}

/** The same, taking what `given` holds as it is instead of parsing its text again (the group commit's own appends). */
export function toRecordedGiven(row: Row, given: Given | undefined): RecordedEvent {
  const position = BigInt(row.position);
  return {
    stream: row.stream,
    revision: BigInt(row.revision),
    position: { commit: position, prepare: position },
    type: row.type,
    data: given?.data ?? JSON.parse(row.data),
    metadata: given?.metadata ?? JSON.parse(row.metadata),
  };
}

/** What a thread of its own reads of the log (projector-thread.ts): synchronous calls on its own connection. */
export interface LogFileReader {
  /** Up to `max` events after `position`, in log order. */
  readAfter(after: bigint, max: number): RecordedEvent[];
  /** The last position, 0 for an empty log. */
  head(): bigint;
  /** The port's readStream and readStreamUntil (payload history, dispatcher/history.ts), over the same connection. */
  readStream(stream: string): Promise<RecordedEvent[]>;
  readStreamUntil(stream: string, position: Position): Promise<RecordedEvent[]>;
  close(): void;
}

/**
 * A reading connection to an existing log file, for a thread of its own that follows the log
 * (the read-model projector thread): the events after a position, the head, and streams (the
 * change feed's envelopes are built there). It never writes; `readonly` makes SQLite hold it to
 * that (a process that reads another's log: `turnout rebuild --prepare`).
 */
export function openLogReader(file: string, options: { readonly?: boolean } = {}): LogFileReader {
  const db = new Database(file, { fileMustExist: true, readonly: options.readonly ?? false });
  db.defaultSafeIntegers(true);
  db.pragma('busy_timeout = 5000');
  const after = db.prepare<[bigint, number], Row>(`SELECT ${ROW} FROM events WHERE position > ? ORDER BY position LIMIT ?`);
  const head = db.prepare<[], bigint | null>('SELECT MAX(position) FROM events').pluck();
  const stream = db.prepare<[string], Row>(`SELECT ${ROW} FROM events WHERE stream = ? ORDER BY revision`);
  const until = db.prepare<[string, bigint], Row>(`SELECT ${ROW} FROM events WHERE stream = ? AND position <= ? ORDER BY revision`);
  return {
    readAfter: (position, max) => after.all(position, max).map(toRecorded),
    head: () => head.get() ?? 0n,
    readStream: async (name) => stream.all(name).map(toRecorded),
    readStreamUntil: async (name, position) => until.all(name, position.commit).map(toRecorded),
    close: () => db.close(),
  };
}
