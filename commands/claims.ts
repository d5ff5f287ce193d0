import { type EventsByCategory, fromLog, inCategory, type LoggedEvent } from '../domain/events.js';
import { appendAfter, handing, metadataOf, type WriteContext } from './context.js';
import type { CommandDeps } from './deps.js';
import { earlierRecord } from './resume.js';
import { Contention } from './aggregate.js';
import { Backoff } from '../eventlog/backoff.js';
import { lastEvent, load } from '../eventlog/load.js';
import type { Evolver, Position } from '../domain/shared/events.js';
import { NO_STREAM, WrongExpectedRevision } from '../eventlog/port.js';

/** The stream categories that hold claims, one stream per unique key. */
type ClaimCategory = 'constituent_email' | 'volunteer_constituent';

export interface CreateOnce<T, C extends ClaimCategory> {
  /** The claim stream of the unique key (an email, a constituent), of category `category`. */
  stream: string;
  category: C;
  /** The id kind of the record created. */
  idKind: string;
  /** The stream of the record of an id. */
  recordStream: (id: number) => string;
  /** What the latest claim (none at first) resolves to without creating; null to create. */
  resolve: (last: LoggedEvent<C> | undefined) => Promise<T | null>;
  /** Last checks before an id is taken: a failed create writes nothing. */
  beforeCreate?: () => void;
  /** The claim naming the id about to be created. */
  claim: (id: number) => EventsByCategory[C];
  create: (id: number) => Promise<T>;
  /**
   * The record the earlier try of a keyed write updated instead of creating (what it resolved
   * to): the same update again, which handle() answers from that try's append. Absent where
   * resolving writes nothing to a record.
   */
  resumeUpdate?: (id: number) => Promise<T>;
}

/**
 * Uniqueness without a lock held in one process (one constituent per upserted email, one
 * volunteer per constituent). Before creating, a writer appends a claim naming its new id to the
 * key's claim stream, expecting the revision it read. Of racing writers one append wins; the
 * others start over, read the winner's claim and resolve to the winner's record instead.
 */
export async function createOnce<T, C extends ClaimCategory>(deps: CommandDeps, ctx: WriteContext, o: CreateOnce<T, C>): Promise<T> {
  // The retry of a keyed write whose earlier try wrote a record: that record, created or updated,
  // not a claim of it, and not a match made again (the record it matched may match no more).
  const earlier = ctx.idem?.earlier ? await earlierRecord(deps.log, ctx, o.recordStream) : null;
  if (earlier?.created) return o.create(earlier.id);
  if (earlier && o.resumeUpdate) return o.resumeUpdate(earlier.id);
  // Each lost claim race is another writer's claim landed, which the next try resolves to; a key
  // contended past the budget answers 503 record_busy (a fixed 50 tries answered task_busy, the
  // task assignment's code, for an email or a constituent).
  let contention: Contention | undefined;
  for (;;) {
    const tail = await lastEvent(deps.log, o.stream);
    const last = tail && fromLog(tail);
    const resolved = await o.resolve(last && inCategory(last, o.category) ? last : undefined);
    if (resolved !== null) return resolved;
    o.beforeCreate?.();
    const id = await deps.ids.next(o.idKind);
    try {
      const claim: EventsByCategory[ClaimCategory] = o.claim(id);
      handing(ctx);
      await appendAfter(deps.log, ctx, o.stream, [{ ...claim, metadata: metadataOf(ctx) }], last ? last.revision : NO_STREAM);
    } catch (err) {
      if (!(err instanceof WrongExpectedRevision)) throw err;
      await (contention ??= new Contention()).lost();
      continue;
    }
    return o.create(id);
  }
}

/**
 * The record a claim names, once its writer has created it: the one way a claim's loser awaits
 * the winner. A claim is appended just before its record, so the winner is given up to 5 s to
 * land it, looked for in the log (the record's stream), not in the read models, which may be
 * behind. Answers the record's state and its last position, to which the caller settles before
 * it reads the record; null when it never came (the winner died in between: the claim is stale).
 */
export async function claimedRecord<S extends { exists: boolean }>(deps: CommandDeps, stream: string, evolver: Evolver<S>): Promise<{ state: S; position: Position } | null> {
  const deadline = Date.now() + 5_000;
  const poll = new Backoff({ initialMs: 1, maxMs: 50 });
  for (;;) {
    const loaded = await load(deps.log, stream, evolver);
    if (loaded.state.exists) return { state: loaded.state, position: loaded.events.at(-1)!.position };
    if (Date.now() > deadline) return null;
    await new Promise((r) => setTimeout(r, poll.next()));
  }
}
