import type { Evolver } from '../domain/shared/events.js';
import { comparePositions, type Position, type RecordedEvent } from '../domain/shared/events.js';
import { sameWrite } from '../domain/shared/revision.js';
import { ALONE as SHARED_ALONE, type WriteOf } from '../domain/shared/webhooks.js';
import { type EventLog } from '../eventlog/port.js';

/** The reads AsOf makes: the log port's, or a thread's own reader of the log file. */
export type StreamReader = Pick<EventLog, 'readStream' | 'readStreamUntil'>;

/**
 * Record state as of one event of the log. Payloads describe the record as the change left it,
 * not as the read model shows it now (which may be later, or deleted): every stream is folded
 * up to the event's position, and only that much of it is read where the log allows (a busy
 * record, or a team's lookup stream, may have grown far past an event still being dispatched).
 * Reads of one event are cached, since a task's payload reads its volunteer's and group's
 * streams as well.
 */
export class AsOf {
  private readonly streams = new Map<string, Promise<RecordedEvent[]>>();

  constructor(
    private readonly log: StreamReader,
    readonly position: Position,
  ) {}

  /** The stream up to the position; `whole`: all of it (for companions appended after the event). */
  private read(stream: string, whole = false): Promise<RecordedEvent[]> {
    const key = whole ? `whole:${stream}` : stream;
    let p = this.streams.get(key);
    if (!p) {
      p = whole || !this.log.readStreamUntil ? this.log.readStream(stream) : this.log.readStreamUntil(stream, this.position);
      this.streams.set(key, p);
    }
    return p;
  }

  /** The event's own stream up to (at least) the event. */
  streamOf(event: RecordedEvent): Promise<RecordedEvent[]> {
    return this.read(event.stream, comparePositions(event.position, this.position) > 0);
  }

  /** The stream folded over every event at or before the position. */
  async state<S>(stream: string, evolver: Evolver<S>): Promise<S> {
    let s = evolver.initial();
    for (const e of await this.read(stream)) {
      if (comparePositions(e.position, this.position) > 0) break;
      s = evolver.evolve(s, e);
    }
    return s;
  }

  /**
   * The event's own record just before and just after it. `companions` names events appended
   * together with it (one write, such as an event's creation with its form defaults, or a task's
   * with its assignment): they are part of the same change, so `after` includes them, and
   * `write.joined` lists them; an event of a later write never is one. `write.opens` says whether
   * the event is the first its write stored in the stream.
   */
  async around<S>(event: RecordedEvent, evolver: Evolver<S>, companions?: (e: RecordedEvent) => boolean): Promise<{ before: S; after: S; write: InWrite }> {
    // The first event of a stream has nothing before it: with no companions to look for, nothing
    // need be read (most webhooks are of creations, and the read was the dispatcher's largest cost).
    if (event.revision === 0n && !companions) return { before: evolver.initial(), after: evolver.evolve(evolver.initial(), event), write: ALONE };
    // Companions follow the event in its stream, past the position: only then is the whole stream read.
    const stream = await this.read(event.stream, Boolean(companions) || comparePositions(event.position, this.position) > 0);
    let before = evolver.initial();
    let i = 0;
    for (; i < stream.length && stream[i].revision < event.revision; i++) before = evolver.evolve(before, stream[i]);
    const opens = i === 0 || !sameWrite(stream[i - 1], event);
    let after = evolver.evolve(before, event);
    const joined: RecordedEvent[] = [];
    if (companions) {
      for (let j = i + 1; j < stream.length && stream[j].revision > event.revision && sameWrite(event, stream[j]) && companions(stream[j]); j++) {
        after = evolver.evolve(after, stream[j]);
        joined.push(stream[j]);
      }
    }
    return { before, after, write: { joined, opens } };
  }
}

/** Where an event stands in the write that stored it (domain/shared/webhooks.ts WriteOf), its companions as read. */
export interface InWrite extends WriteOf {
  readonly joined: readonly RecordedEvent[];
}

/** An event stored alone (domain/shared/webhooks.ts ALONE: its companions, none, are events of the log). */
const ALONE = SHARED_ALONE as InWrite;
