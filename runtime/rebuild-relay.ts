import Database from 'better-sqlite3';
import type { RecordedEvent } from '../domain/shared/events.js';
import { ROW, type Row, toRecorded } from '../eventlog/sqlite-file.js';
import type { LogReader } from '../projections/engine/sqlite-step.js';

/**
 * A chunk of the log as the rebuild's first thread hands it to the second (rebuild-lane.ts): each
 * event's stored columns in turn (position, stream, revision, type, data, metadata: six values an
 * event, data and metadata their stored JSON), and the log's head as that thread read it.
 */
export interface RelayedChunk {
  type: 'chunk';
  rows: Array<number | string>;
  head: number;
}

/**
 * The rebuild's first thread's reader of the log (rebuild.ts): it reads each chunk once and hands
 * its stored columns to the second thread too, so the log is read once, not once a thread. A
 * flat array of strings is what the threads' structured clone copies fastest: about 1 µs an event
 * to this thread, a third of its read from SQLite, and one JSON text of the chunk cost more on
 * both sides. The JSON is parsed where it is used.
 */
export class RelayedLog implements LogReader {
  private readonly db: Database.Database;
  private readonly after: Database.Statement<[bigint, number], Row>;
  private readonly last: Database.Statement<[], bigint | null>;
  /** Events handed over so far. */
  relayed = 0;

  constructor(
    file: string,
    private readonly send: (chunk: RelayedChunk) => void,
  ) {
    this.db = new Database(file, { fileMustExist: true, readonly: true });
    this.db.defaultSafeIntegers(true);
    this.after = this.db.prepare(`SELECT ${ROW} FROM events WHERE position > ? ORDER BY position LIMIT ?`);
    this.last = this.db.prepare<[], bigint | null>('SELECT MAX(position) FROM events').pluck();
  }

  head(): bigint {
    return this.last.get() ?? 0n;
  }

  /** Every chunk is handed over, an empty one too: the other thread is caught up when it reaches the head sent with it. */
  readAfter(after: bigint, max: number): RecordedEvent[] {
    const head = this.head();
    const rows = this.after.all(after, max);
    const flat = new Array<number | string>(rows.length * 6);
    for (let i = 0, j = 0; i < rows.length; i++, j += 6) {
      const r = rows[i];
      // Positions and revisions of a log file are far below 2^53.
      flat[j] = Number(r.position);
      flat[j + 1] = r.stream;
      flat[j + 2] = Number(r.revision);
      flat[j + 3] = r.type;
      flat[j + 4] = r.data;
      flat[j + 5] = r.metadata;
    }
    this.send({ type: 'chunk', rows: flat, head: Number(head) });
    this.relayed += rows.length;
    return rows.map(toRecorded);
  }

  close(): void {
    this.db.close();
  }
}

/**
 * The second thread's side (rebuild-lane.ts): the chunks the first thread handed over, in order,
 * read as the log. `ready` resolves once a chunk waits; the lane steps only then.
 */
export class RelayReader implements LogReader {
  private readonly chunks: RelayedChunk[] = [];
  /** What is left of a chunk a step took only part of. */
  private rest: RecordedEvent[] = [];
  private known = 0n;
  private wake: (() => void) | null = null;

  /** A chunk from the first thread. */
  take(chunk: RelayedChunk): void {
    this.chunks.push(chunk);
    this.wake?.();
    this.wake = null;
  }

  ready(): Promise<void> {
    if (this.rest.length || this.chunks.length) return Promise.resolve();
    return new Promise((resolve) => (this.wake = resolve));
  }

  head(): bigint {
    if (!this.rest.length && this.chunks.length) this.known = BigInt(this.chunks[0].head);
    return this.known;
  }

  readAfter(after: bigint, max: number): RecordedEvent[] {
    if (!this.rest.length) {
      const chunk = this.chunks.shift();
      if (!chunk) throw new Error('the rebuild lane read past what it was handed');
      this.known = BigInt(chunk.head);
      this.rest = eventsOf(chunk.rows);
    }
    if (this.rest.length && this.rest[0].position.commit <= after) throw new Error(`the rebuild lane was handed position ${this.rest[0].position.commit}, at ${after} already`);
    const events = this.rest.length <= max ? this.rest : this.rest.slice(0, max);
    this.rest = this.rest.length <= max ? [] : this.rest.slice(max);
    return events;
  }
}

/** The events of a chunk's columns, as the log's own reader makes them (eventlog/sqlite-file.ts toRecorded). */
function eventsOf(rows: Array<number | string>): RecordedEvent[] {
  const events = new Array<RecordedEvent>(rows.length / 6);
  for (let i = 0, j = 0; j < rows.length; i++, j += 6) {
    events[i] = toRecorded({ position: rows[j] as number, stream: rows[j + 1] as string, revision: rows[j + 2] as number, type: rows[j + 3] as string, data: rows[j + 4] as string, metadata: rows[j + 5] as string });
  }
  return events;
}
