import { fromLog, type IdBlockReserved, inCategory } from '../domain/events.js';
import { lastEvent } from '../eventlog/load.js';
import { type EventLog, NO_STREAM, WrongExpectedRevision } from '../eventlog/port.js';

/**
 * Ids are positive integers, unique per resource type across the installation and never reused
 * (decisions.md 3). Each process reserves blocks of ids by appending to the type's id stream
 * with the expected revision, so processes sharing a log never hand out the same id, and one
 * durable write serves a whole block.
 */
export class IdAllocator {
  private readonly blocks = new Map<string, { next: number; end: number }>();
  private readonly inflight = new Map<string, Promise<void>>();

  constructor(
    private readonly log: EventLog,
    private readonly blockSize = 100,
  ) {}

  static stream(kind: string) {
    return `ids-${kind}`;
  }

  async next(kind: string): Promise<number> {
    for (;;) {
      const b = this.blocks.get(kind);
      if (b && b.next <= b.end) return b.next++;
      let p = this.inflight.get(kind);
      if (!p) {
        p = this.reserve(kind).finally(() => this.inflight.delete(kind));
        this.inflight.set(kind, p);
      }
      await p;
    }
  }

  /** Where this process last left each id stream: the next reservation appends after it without reading. */
  private readonly tails = new Map<string, { revision: bigint; to: number }>();

  private async reserve(kind: string): Promise<void> {
    const stream = IdAllocator.stream(kind);
    for (;;) {
      // Read the stream's last event only when this process does not know its tail, or lost a
      // race for it: the stream grows by one event per block, so reading it whole would not scale.
      let tail = this.tails.get(kind);
      if (!tail) {
        const raw = await lastEvent(this.log, stream);
        const last = raw && fromLog(raw);
        if (last && inCategory(last, 'ids')) this.tails.set(kind, (tail = { revision: last.revision, to: last.data.to }));
      }
      const from = tail ? tail.to + 1 : 1;
      const to = from + this.blockSize - 1;
      const reserved: IdBlockReserved = { type: 'IdBlockReserved', data: { kind, from, to } };
      try {
        const r = await this.log.append(
          stream,
          [{ ...reserved, metadata: { team: 0, source: 'Application', keyName: null, correlationId: 'ids', at: new Date().toISOString() } }],
          tail ? tail.revision : NO_STREAM,
        );
        this.tails.set(kind, { revision: r.nextExpectedRevision, to });
        this.blocks.set(kind, { next: from, end: to });
        return;
      } catch (err) {
        if (!(err instanceof WrongExpectedRevision)) throw err;
        this.tails.delete(kind);
      }
    }
  }
}
