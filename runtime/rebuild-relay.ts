import { type MessagePort, receiveMessageOnPort } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { LogReader } from '../projections/engine/sqlite-step.js';
import { type ChunkText, COLUMNS, eventsOf, lastPosition } from './rebuild-events.js';

/**
 * A chunk of the log as the rebuild's first thread hands it to the second (rebuild-lane.ts): its
 * events' stored columns in memory both threads share (rebuild-events.ts ChunkText), and the
 * log's head as that thread read it.
 */
export interface RelayedChunk extends ChunkText {
  type: 'chunk';
  head: number;
}

/**
 * The most bytes of texts one statement concatenates: at the scale log a chunk's texts are 2-8 MB,
 * one piece; a log of bigger events reads a chunk in a few, each sorted by group_concat's ORDER BY
 * in a temporary b-tree of about its size (in memory: temp_store below).
 */
const PIECE_BYTES = 8 * 1024 * 1024;

/** An event's texts in a chunk, in this order (rebuild-events.ts ChunkText). */
const TEXTS = ['stream', 'type', 'data', 'metadata'];

/**
 * The rebuild's first thread's reader of the log (rebuild.ts): it reads each chunk once and hands
 * its stored columns to the second thread too, so the log is read once, not once a thread. The
 * chunk's text is copied once into memory both threads share and read their events from
 * (rebuild-events.ts): the message carries no strings, and neither thread holds the chunk's text
 * as strings while it applies it. The JSON is parsed where it is used. Against the chunk read as
 * rows of strings and handed over as a flat array of them, the three threads' CPU at the scale
 * log fell from 49.7 to 45.6 s (medians of six runs each, docs/bench.md): less garbage collection.
 */
export class RelayedLog implements LogReader {
  private readonly db: Database.Database;
  private readonly numbers: Database.Statement<[bigint, number], number[]>;
  private readonly texts: Database.Statement<[bigint, number], Buffer>;
  private readonly last: Database.Statement<[], bigint | null>;
  /** Events handed over so far. */
  relayed = 0;
  /** The chunks handed over that the other thread may not have applied yet: the events handed up to each's end, its bytes. */
  private readonly held: Array<{ upTo: number; bytes: number }> = [];
  private heldBytes = 0;
  /** The most bytes ever held so (the bench shows it). */
  mostHeld = 0;
  /** The chunk after the one this thread last read, handed over already: where it begins, its size asked, the chunk. */
  private ahead: { after: bigint; max: number; chunk: ChunkText } | null = null;

  constructor(
    file: string,
    private readonly send: (chunk: RelayedChunk) => void,
    private readonly pieceBytes = PIECE_BYTES,
  ) {
    this.db = new Database(file, { fileMustExist: true, readonly: true });
    this.db.defaultSafeIntegers(true);
    // group_concat's ORDER BY sorts its piece in a temporary b-tree, which SQLite keeps in a file
    // by default once past its cache (about 14 MB): a write a page, twice the read's time.
    this.db.pragma('temp_store = MEMORY');
    // The chunk read twice from the same pages: its numbers, then its texts as one UTF-8 blob,
    // copied by SQLite, so that this thread makes no string of them (the log's columns are TEXT:
    // cast to BLOB, their bytes as stored).
    const range = 'FROM events WHERE position > ? ORDER BY position LIMIT ?';
    this.numbers = this.db
      .prepare<[bigint, number], number[]>(`SELECT position, revision, ${TEXTS.map((c) => `length(CAST(${c} AS BLOB))`).join(', ')} ${range}`)
      .raw()
      .safeIntegers(false);
    this.texts = this.db
      .prepare<[bigint, number], Buffer>(`SELECT CAST(group_concat(${TEXTS.join(' || ')}, '' ORDER BY position) AS BLOB) FROM (SELECT position, ${TEXTS.join(', ')} ${range})`)
      .pluck();
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
    let chunk: ChunkText;
    if (this.ahead) {
      if (this.ahead.after !== after || this.ahead.max !== max) throw new Error(`the rebuild's relay was asked for ${max} events after ${after}, having handed ${this.ahead.max} after ${this.ahead.after}`);
      chunk = this.ahead.chunk;
      this.ahead = null;
    } else chunk = this.hand(after, max);
    const end = lastPosition(chunk) ?? after;
    if (chunk.count === max && end < this.head()) this.ahead = { after: end, max, chunk: this.hand(end, max) };
    return eventsOf(chunk);
  }

  /** Reads the chunk of `max` events after `after` and hands it over. */
  private hand(after: bigint, max: number): ChunkText {
    // One snapshot for the head and every read, whatever else writes the log meanwhile.
    const { head, chunk } = this.db.transaction(() => {
      const numbers = this.numbers.all(after, max);
      const count = numbers.length;
      const columns = new SharedArrayBuffer(8 * COLUMNS * count);
      const ends = new Float64Array(columns);
      let end = 0;
      for (let i = 0, j = 0; i < count; i++, j += COLUMNS) {
        const n = numbers[i];
        ends[j] = n[0];
        ends[j + 1] = n[1];
        ends[j + 2] = end += n[2];
        ends[j + 3] = end += n[3];
        ends[j + 4] = end += n[4];
        ends[j + 5] = end += n[5];
      }
      const text = new SharedArrayBuffer(end);
      const into = new Uint8Array(text);
      // The texts in pieces of at most `pieceBytes` (an event longer alone), each one blob: SQLite
      // refuses a blob over 1 GB, and a chunk of big events could make one; and each piece is
      // sorted in memory (PIECE_BYTES).
      for (let first = 0; first < count; ) {
        const from = first ? ends[(first - 1) * COLUMNS + 5] : 0;
        let last = first;
        while (last + 1 < count && ends[(last + 1) * COLUMNS + 5] - from <= this.pieceBytes) last++;
        const bytes = this.texts.get(first ? BigInt(ends[(first - 1) * COLUMNS]) : after, last - first + 1)!;
        const to = ends[last * COLUMNS + 5];
        if (bytes.length !== to - from) throw new Error(`the rebuild's relay read ${bytes.length} bytes of text after position ${ends[first * COLUMNS]}, its events' lengths add up to ${to - from}`);
        into.set(bytes, from);
        first = last + 1;
      }
      return { head: this.head(), chunk: { text, columns, count } };
    })();
    const end = chunk.text.byteLength;
    this.send({ type: 'chunk', ...chunk, head: Number(head) });
    this.relayed += chunk.count;
    this.held.push({ upTo: this.relayed, bytes: end });
    this.heldBytes += end;
    this.mostHeld = Math.max(this.mostHeld, this.heldBytes);
    return chunk;
  }

  /**
   * The events the other thread must have applied (of those handed, in order) for the chunks it
   * has not applied to hold at most `cap` bytes, given it has applied `applied`: 0 when they do.
   */
  neededFor(cap: number, applied: number): number {
    while (this.held.length && this.held[0].upTo <= applied) this.heldBytes -= this.held.shift()!.bytes;
    let over = this.heldBytes - cap;
    if (over <= 0) return 0;
    for (const chunk of this.held) {
      over -= chunk.bytes;
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
 * meanwhile). Taken off the port only when wanted.
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
      this.rest = eventsOf(chunk);
    }
    if (this.rest.length && this.rest[0].position.commit <= after) throw new Error(`the rebuild lane was handed position ${this.rest[0].position.commit}, at ${after} already`);
    const events = this.rest.length <= max ? this.rest : this.rest.slice(0, max);
    this.rest = this.rest.length <= max ? [] : this.rest.slice(max);
    return events;
  }
}
