import type { EventMetadata, Position, RecordedEvent } from '../domain/shared/events.js';

/**
 * A chunk of the log's stored columns as the rebuild's threads share it (rebuild-relay.ts), in
 * memory outside either thread's heap: each event's stream, type, data and metadata (the stored
 * JSON) as UTF-8, one after another, in `text`; in `columns`, six numbers an event: its position,
 * its revision and where each of its four texts ends in `text` (each begins where the one before
 * ends). Positions and revisions of a log file are far below 2^53.
 *
 * Held as strings, a chunk's 20,000 events (2-8 MB of UTF-8 at the scale log, twice as many bytes as strings) outlived the
 * young-generation collections while the chunk was applied, on both threads: each one's text was
 * copied once inside the young generation and once more into the old one, where it died (0.6 KB
 * an event promoted on each thread). Here only the data and metadata of the event being applied
 * are strings, and they die young; the first thread makes no string of the rest at all (SQLite
 * copies the chunk's text into one buffer, rebuild-relay.ts).
 */
export interface ChunkText {
  text: SharedArrayBuffer;
  columns: SharedArrayBuffer;
  count: number;
}

/** Numbers an event in a chunk's `columns`. */
export const COLUMNS = 6;

/** The position of a chunk's last event, or null when it holds none. */
export function lastPosition(chunk: ChunkText): bigint | null {
  return chunk.count ? BigInt(new Float64Array(chunk.columns)[(chunk.count - 1) * COLUMNS]) : null;
}

/**
 * An event of a chunk: its position, revision, stream and type read from the chunk when made,
 * its data and metadata when asked. Only the event read last keeps its parsed values (the step
 * applies one event to every projector before the next), so they die young; one read again after
 * another is parsed again. Its stream and type (a few dozen bytes) are read up front: projectors
 * and the engine's router ask them of every event of a chunk, in turns with other events'.
 */
class TextEvent implements RecordedEvent {
  readonly position: Position;
  readonly revision: bigint;
  readonly stream: string;
  readonly type: string;
  readonly #bytes: Buffer;
  /** Where its data begins in the chunk's text, where its data ends, where its metadata ends. */
  readonly #from: number;
  readonly #dataEnd: number;
  readonly #end: number;

  constructor(bytes: Buffer, ends: Float64Array, at: number) {
    const position = BigInt(ends[at]);
    this.position = { commit: position, prepare: position };
    this.revision = BigInt(ends[at + 1]);
    // Its stream begins where the event before it ends, the chunk's first at 0.
    this.stream = bytes.toString('utf8', at ? ends[at - 1] : 0, ends[at + 2]);
    this.type = bytes.toString('utf8', ends[at + 2], ends[at + 3]);
    this.#bytes = bytes;
    this.#from = ends[at + 3];
    this.#dataEnd = ends[at + 4];
    this.#end = ends[at + 5];
  }

  get data(): Record<string, unknown> {
    return this.#parsed().data;
  }

  get metadata(): EventMetadata {
    return this.#parsed().metadata;
  }

  #parsed(): { data: Record<string, unknown>; metadata: EventMetadata } {
    if (parsedFor !== this || parsed === null) {
      parsed = {
        data: JSON.parse(this.#bytes.toString('utf8', this.#from, this.#dataEnd)) as Record<string, unknown>,
        metadata: JSON.parse(this.#bytes.toString('utf8', this.#dataEnd, this.#end)) as EventMetadata,
      };
      parsedFor = this;
    }
    return parsed;
  }
}

/** The one event whose values are parsed, and them. */
let parsedFor: TextEvent | null = null;
let parsed: { data: Record<string, unknown>; metadata: EventMetadata } | null = null;

/** The events of a chunk, in order (a view: nothing of the chunk is copied). */
export function eventsOf(chunk: ChunkText): RecordedEvent[] {
  const bytes = Buffer.from(chunk.text);
  const ends = new Float64Array(chunk.columns);
  const events = new Array<RecordedEvent>(chunk.count);
  for (let i = 0; i < chunk.count; i++) events[i] = new TextEvent(bytes, ends, i * COLUMNS);
  return events;
}
