import { type MessagePort, receiveMessageOnPort } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { RecordedEvent } from '../domain/shared/events.js';
import { ROW, type Row } from '../eventlog/sqlite-file.js';
import type { LogReader } from '../projections/engine/sqlite-step.js';
import { textEvent, textEventOf } from './rebuild-events.js';

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
  /** The chunks handed over that the other thread may not have applied yet: the events handed up to each's end, its characters. */
  private readonly held: Array<{ upTo: number; chars: number }> = [];
  private heldChars = 0;
  /** The most characters ever held so (the bench shows it). */
  mostHeld = 0;
  /** The chunk after the one this thread last read, handed over already: where it begins, its size asked, its rows. */
  private ahead: { after: bigint; max: number; rows: Row[] } | null = null;

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

  /**
   * Every chunk is handed over, an empty one too: the other thread is caught up when it reaches
   * the head sent with it. The next one is read and handed over before this one is returned, so
   * the other thread has it while this one applies this: its wait for this thread's apply of each
   * chunk was the other thread's only wait. So the chunks are read in order, each after the last.
   */
  readAfter(after: bigint, max: number): RecordedEvent[] {
    let rows: Row[];
    if (this.ahead) {
      if (this.ahead.after !== after || this.ahead.max !== max) throw new Error(`the rebuild's relay was asked for ${max} events after ${after}, having handed ${this.ahead.max} after ${this.ahead.after}`);
      rows = this.ahead.rows;
      this.ahead = null;
    } else rows = this.hand(after, max);
    const end = rows.length ? BigInt(rows[rows.length - 1].position) : after;
    if (rows.length === max && end < this.head()) this.ahead = { after: end, max, rows: this.hand(end, max) };
    return rows.map(textEventOf);
  }

  /** Reads the chunk of `max` events after `after` and hands its stored columns over. */
  private hand(after: bigint, max: number): Row[] {
    const head = this.head();
    const rows = this.after.all(after, max);
    const flat = new Array<number | string>(rows.length * 6);
    let chars = 0;
    for (let i = 0, j = 0; i < rows.length; i++, j += 6) {
      const r = rows[i];
      // Positions and revisions of a log file are far below 2^53.
      flat[j] = Number(r.position);
      flat[j + 1] = r.stream;
      flat[j + 2] = Number(r.revision);
      flat[j + 3] = r.type;
      flat[j + 4] = r.data;
      flat[j + 5] = r.metadata;
      chars += r.stream.length + r.type.length + r.data.length + r.metadata.length;
    }
    this.send({ type: 'chunk', rows: flat, head: Number(head) });
    this.relayed += rows.length;
    this.held.push({ upTo: this.relayed, chars });
    this.heldChars += chars;
    this.mostHeld = Math.max(this.mostHeld, this.heldChars);
    return rows;
  }

  /**
   * The events the other thread must have applied (of those handed, in order) for the chunks it
   * has not applied to hold at most `cap` characters, given it has applied `applied`: 0 when they do.
   */
  neededFor(cap: number, applied: number): number {
    while (this.held.length && this.held[0].upTo <= applied) this.heldChars -= this.held.shift()!.chars;
    let over = this.heldChars - cap;
    if (over <= 0) return 0;
    for (const chunk of this.held) {
      over -= chunk.chars;
      if (over <= 0) return chunk.upTo;
    }
    return this.relayed;
  }

  close(): void {
    this.db.close();
  }
}

/**
 * The first thread's end of the hand-over: a chunk posted on its own port, then the bell rung
 * that the second thread waits on (chunkReceiver).
 */
export function chunkSender(port: MessagePort, bell: Int32Array): (chunk: RelayedChunk) => void {
  return (chunk) => {
    port.postMessage(chunk);
    Atomics.add(bell, 0, 1);
    Atomics.notify(bell, 0);
  };
}

/**
 * The second thread's end: the next chunk, waited for (that thread has nothing else to do
 * meanwhile). Taken off the port only when wanted, so the chunks handed ahead wait there as their
 * structured clone, not as strings in that thread's heap, which each of its collections would walk.
 */
export function chunkReceiver(port: MessagePort, bell: Int32Array): () => RelayedChunk {
  return () => {
    for (;;) {
      const rung = Atomics.load(bell, 0);
      const got = receiveMessageOnPort(port);
      if (got) return got.message as RelayedChunk;
      // Bounded, so that a thread told to stop is not held in a wait nothing will end.
      Atomics.wait(bell, 0, rung, 1_000);
    }
  };
}

/**
 * The second thread's side (rebuild-lane.ts): the chunks the first thread handed over, in order,
 * read as the log, each taken (waited for) from `next` once the one before is used up.
 */
export class RelayReader implements LogReader {
  /** The next chunk, taken to tell the head and not yet read. */
  private waiting: RelayedChunk | null = null;
  /** What is left of a chunk a step took only part of. */
  private rest: RecordedEvent[] = [];
  private known = 0n;

  constructor(private readonly next: () => RelayedChunk) {}

  head(): bigint {
    if (!this.rest.length) {
      this.waiting ??= this.next();
      this.known = BigInt(this.waiting.head);
    }
    return this.known;
  }

  readAfter(after: bigint, max: number): RecordedEvent[] {
    if (!this.rest.length) {
      const chunk = this.waiting ?? this.next();
      this.waiting = null;
      this.known = BigInt(chunk.head);
      this.rest = eventsOf(chunk.rows);
    }
    if (this.rest.length && this.rest[0].position.commit <= after) throw new Error(`the rebuild lane was handed position ${this.rest[0].position.commit}, at ${after} already`);
    const events = this.rest.length <= max ? this.rest : this.rest.slice(0, max);
    this.rest = this.rest.length <= max ? [] : this.rest.slice(max);
    return events;
  }
}

/** The events of a chunk's columns, their JSON parsed when read (rebuild-events.ts). */
function eventsOf(rows: Array<number | string>): RecordedEvent[] {
  const events = new Array<RecordedEvent>(rows.length / 6);
  for (let i = 0, j = 0; j < rows.length; i++, j += 6) {
    events[i] = textEvent(rows[j] as number, rows[j + 1] as string, rows[j + 2] as number, rows[j + 3] as string, rows[j + 4] as string, rows[j + 5] as string);
  }
  return events;
}
