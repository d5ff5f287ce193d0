import type { DomainEvent, Evolver } from '../commands/aggregate.js';
import { comparePositions, type EventLog, type Position, type RecordedEvent } from '../commands/eventlog/port.js';

/**
 * Record state as of one event of the log. Payloads describe the record as the change left it,
 * not as the read model shows it now (which may be later, or deleted): every stream is folded
 * up to the event's position. Reads of one event are cached, since a task's payload reads its
 * volunteer's and group's streams as well.
 */
export class AsOf {
  private readonly streams = new Map<string, Promise<RecordedEvent[]>>();

  constructor(
    private readonly log: EventLog,
    readonly position: Position,
  ) {}

  private read(stream: string): Promise<RecordedEvent[]> {
    let p = this.streams.get(stream);
    if (!p) {
      p = this.log.readStream(stream);
      this.streams.set(stream, p);
    }
    return p;
  }

  /** The stream folded over every event at or before the position. */
  async state<S>(stream: string, evolver: Evolver<S>): Promise<S> {
    let s = evolver.initial();
    for (const e of await this.read(stream)) {
      if (comparePositions(e.position, this.position) > 0) break;
      s = evolver.evolve(s, e as DomainEvent);
    }
    return s;
  }

  /** The event's own record just before and just after it. */
  async around<S>(event: RecordedEvent, evolver: Evolver<S>): Promise<{ before: S; after: S }> {
    let before = evolver.initial();
    for (const e of await this.read(event.stream)) {
      if (e.revision >= event.revision) break;
      before = evolver.evolve(before, e as DomainEvent);
    }
    return { before, after: evolver.evolve(before, event as DomainEvent) };
  }
}
