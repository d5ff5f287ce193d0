import { fromLog, type IdBlockReserved, inCategory } from '../domain/events.js';
import { lastEvent } from '../eventlog/load.js';
import { type EventLog, NO_STREAM, WrongExpectedRevision } from '../eventlog/port.js';

/** Ids set aside for one caller of reserveAhead: how many it still needs, and its end. */
export interface IdClaim {
  left: number;
  done(): void;
}

/**
 * Ids are positive integers, unique per resource type across the installation and never reused
 * (decisions.md 3). Each process reserves blocks of ids by appending to the type's id stream
 * with the expected revision, so processes sharing a log never hand out the same id, and one
 * durable write serves a whole block.
 */
export class IdAllocator {
  /** Each kind's reserved ranges not yet handed out, oldest first. */
  private readonly blocks = new Map<string, Array<{ next: number; end: number }>>();
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
      const list = this.blocks.get(kind);
      while (list?.length && list[0].next > list[0].end) list.shift();
      if (list?.length) {
        const id = list[0].next++;
        this.reserveBeforeRunningOut(kind, list);
        return id;
      }
      await this.reserving(kind, this.blockSize);
    }
  }

  /**
   * Once half of the last reserved block is left, the next block is reserved meanwhile:
   * otherwise every write arriving while that reservation commits (a whole group commit under
   * load) waits for it. A failed reservation here is left to the next call that runs out.
   */
  private reserveBeforeRunningOut(kind: string, list: Array<{ next: number; end: number }>): void {
    if (list.length !== 1 || this.inflight.has(kind)) return;
    const left = list[0].end - list[0].next + 1;
    if (left > 0 && left <= this.blockSize / 2) this.reserving(kind, this.blockSize).catch(() => {});
  }

  /**
   * Makes sure `count` ids of `kind` are reserved before they are asked for, in one append: a
   * batch of writes (commands/batch.ts) then never waits for a block's durable commit midway.
   * The ids other batches still running were promised count as taken: two batches reserving at
   * once each get their own, instead of sharing one reservation and both running out midway
   * (a durable commit's wait every 100 items, which kept batches in flight in lockstep). The
   * caller says, through the claim answered, how many it still needs (`left`) and when it is done.
   * Ids reserved and not handed out are skipped after a restart, as a block's rest always was.
   */
  async reserveAhead(kind: string, count: number): Promise<IdClaim> {
    let claims = this.claims.get(kind);
    if (!claims) this.claims.set(kind, (claims = new Set()));
    for (;;) {
      let owed = 0;
      for (const c of claims) owed += Math.max(0, c.left);
      const available = (this.blocks.get(kind) ?? []).reduce((n, b) => n + Math.max(0, b.end - b.next + 1), 0);
      if (available - owed >= count) break;
      await this.reserving(kind, Math.max(this.blockSize, count + owed - available));
    }
    const mine = claims;
    const claim: IdClaim = { left: count, done: () => void mine.delete(claim) };
    mine.add(claim);
    return claim;
  }

  /** The claims of reserveAhead's callers still running, by kind. */
  private readonly claims = new Map<string, Set<IdClaim>>();

  /** One reservation of `size` ids at a time per kind; a caller arriving meanwhile waits for it. */
  private async reserving(kind: string, size: number): Promise<void> {
    let p = this.inflight.get(kind);
    if (p) return p;
    p = this.reserve(kind, size).finally(() => this.inflight.delete(kind));
    this.inflight.set(kind, p);
    return p;
  }

  /** Where this process last left each id stream: the next reservation appends after it without reading. */
  private readonly tails = new Map<string, { revision: bigint; to: number }>();

  private async reserve(kind: string, size: number): Promise<void> {
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
      const to = from + size - 1;
      const reserved: IdBlockReserved = { type: 'IdBlockReserved', data: { kind, from, to } };
      try {
        const r = await this.log.append(
          stream,
          [{ ...reserved, metadata: { team: 0, source: 'Application', keyName: null, correlationId: 'ids', at: new Date().toISOString() } }],
          tail ? tail.revision : NO_STREAM,
        );
        this.tails.set(kind, { revision: r.nextExpectedRevision, to });
        const list = this.blocks.get(kind) ?? [];
        list.push({ next: from, end: to });
        this.blocks.set(kind, list);
        return;
      } catch (err) {
        if (!(err instanceof WrongExpectedRevision)) throw err;
        this.tails.delete(kind);
      }
    }
  }
}
