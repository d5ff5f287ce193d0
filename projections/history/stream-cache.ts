import type { RecordedEvent } from '../../domain/shared/events.js';
import type { EventLog } from '../../eventlog/port.js';

const MAX_STREAMS = 128;
/** Longer streams are read whole each time rather than held (memory stays bounded). */
const MAX_EVENTS = 20_000;

/**
 * The streams that history and as-of reads fold, kept per log object: a stream is append-only,
 * so a held copy needs only its new tail, found with one indexed read of the newest event. A
 * record with 1,000 revisions then reads in about a millisecond instead of parsing 1,000 events
 * per request (decisions.md §10), with no snapshot written anywhere.
 */
class StreamCache {
  private readonly streams = new Map<string, RecordedEvent[]>();

  constructor(private readonly log: EventLog) {}

  forget(stream: string): void {
    this.streams.delete(stream);
  }

  async read(stream: string): Promise<RecordedEvent[]> {
    const backwards = this.log.readStreamBackwards?.bind(this.log);
    const held = this.streams.get(stream);
    if (!backwards) return this.log.readStream(stream);
    if (held) {
      const [newest] = await backwards(stream, 1);
      const last = held[held.length - 1].revision;
      if (newest && newest.revision > last) {
        const tail = await backwards(stream, Number(newest.revision - last));
        // Erased since it was held (by another process: this one forgets at its own erasure): the
        // copy holds the person's values, which the log no longer gives (decisions.md §17).
        if (tail.some(erased)) {
          this.streams.delete(stream);
          return this.log.readStream(stream);
        }
        held.push(...tail.filter((e) => e.revision > last).reverse());
      }
      this.streams.delete(stream); // most recently used goes last
      this.streams.set(stream, held);
      return held;
    }
    const events = await this.log.readStream(stream);
    // An erased record's stream is not held: its events are rewritten in place once the erasure
    // reaches the log, with no new revision that would tell a held copy it is stale.
    if (events.length && events.length <= MAX_EVENTS && !events.some(erased)) {
      this.streams.set(stream, events);
      if (this.streams.size > MAX_STREAMS) this.streams.delete(this.streams.keys().next().value!);
    }
    return events;
  }
}

/** The erasure's record in a constituent's stream (decisions.md §17). */
const erased = (e: RecordedEvent): boolean => e.type === 'ConstituentErased';

const caches = new WeakMap<EventLog, StreamCache>();

/** A stream's events, oldest first, through the log's cache. Callers must not change the array. */
export function readRecordStream(log: EventLog, stream: string): Promise<RecordedEvent[]> {
  let cache = caches.get(log);
  if (!cache) caches.set(log, (cache = new StreamCache(log)));
  return cache.read(stream);
}

/** Drops a stream's held copy: its events were rewritten in place (an erasure, decisions.md §17). */
export function forgetRecordStream(log: EventLog, stream: string): void {
  caches.get(log)?.forget(stream);
}
