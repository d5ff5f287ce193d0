import type { BatchStarted } from '../domain/events.js';
import { DomainError, RecordBusy } from '../domain/shared/errors.js';
import { comparePositions, type Position } from '../domain/shared/events.js';
import { lastEvent, teamEventsUpTo } from '../eventlog/load.js';
import { type AppendResult, type EventLog, NO_STREAM, WrongExpectedRevision } from '../eventlog/port.js';
import { keyRef, metadataOf, type WriteContext } from './context.js';
import type { CommandDeps } from './deps.js';
import type { IdClaim } from './ids.js';

/** decisions.md §14: 1..1000 items a batch. */
export const MAX_BATCH_ITEMS = 1000;
/** A batch's journal lives as long as its Idempotency-Key is kept (decisions.md §11). */
const KEY_LIFE_MS = 24 * 60 * 60 * 1000;

/**
 * What one item came to: the record it created or matched, or the domain error it answers. A
 * command that made the record's document from its own events (as the single create answers)
 * gives it as `record`, so the answer need not read it back.
 */
export type ItemOutcome = { id: number; created: boolean; record?: Record<string, unknown> } | DomainError;

export interface BatchResource {
  /** Stream category of the records the items write (`constituent` of `constituent-12`). */
  category: string;
  /** The id kind of the records the items create (commands/ids.ts). */
  idKind: string;
  /** One item, written exactly as the single create writes it (the same command function). */
  write(deps: CommandDeps, ctx: WriteContext, body: unknown): Promise<{ id: number; created: boolean; record?: Record<string, unknown> }>;
  /**
   * The command's only wait for the read models is for its own appends (a plain create): the
   * batch then waits once, for the last of them, before it answers, instead of once per item.
   * Not for an upsert, whose item may need an earlier item's record readable before it decides.
   */
  settlesOnce?: boolean;
  /**
   * What an item's write does after its commit, done again for an item an earlier try committed
   * (its answer is read, not written again): the race checks of a registration or an assignment,
   * which that try may have failed after its commit. Answers the record as the item wrote it where
   * the check undid it (a volunteer whose constituent was deleted meanwhile: its read is 404), as
   * the single write answers.
   */
  resumed?(deps: CommandDeps, ctx: WriteContext, id: number): Promise<Record<string, unknown> | undefined>;
}

/** The request's Idempotency-Key and its scope (api/idempotency.ts); absent without the header. */
export interface BatchKey {
  scope: string;
  key: string;
}

/**
 * A batch write (decisions.md §14): each item is written by the single create's own command, so
 * ids, events, webhooks, activity and read-your-writes are the single create's; items are
 * independent, and one item's domain error is its own answer.
 *
 * Order: item i+1 starts only once item i has handed its record's append to the log (or has
 * ended without one), so ids and appends follow item order, while the commits of many items
 * share the log's group commits instead of waiting for each other's. Every append of item i+1
 * follows that record append (WriteContext.after): committed with it or after it, never if it
 * failed, so a 5xx leaves nothing written past the last committed item (decisions.md §14). A log
 * that cannot order appends (EventLog.ordersAppends) is handed item i+1's once item i's committed.
 *
 * Retries (the Idempotency-Key): every event of item i carries `batchItem: <ref>#<i>` in its
 * metadata, written in the same append as the item's record, and the batch first appends a
 * `BatchStarted` to `batch-<ref>`. A retry of a batch that failed or whose process died finds that
 * journal, reads the team's events written since it, and answers each item found there from its
 * record instead of writing it again: exactly the items that did not commit are run again.
 */
export async function writeBatch(deps: CommandDeps, ctx: WriteContext, resource: BatchResource, items: unknown[], idem?: BatchKey): Promise<ItemOutcome[]> {
  const ref = idem ? batchRef(idem, resource.category) : undefined;
  // The items' ids in one durable reservation up front: otherwise every 100th item would hold
  // the items behind it until its id block's commit (a third of the import's rate, measured).
  // Asked for with the journal's start, so the two appends share a commit instead of waiting for
  // one after the other; a retry reserves a few ids it will not use, skipped as a block's rest is.
  const reserving = deps.ids.reserveAhead(resource.idKind, items.length);
  // Awaited below; its failure is the batch's then, not an unhandled rejection meanwhile.
  reserving.catch(() => {});
  let committed: Map<number, { id: number; created: boolean }>;
  try {
    committed = ref ? await resume(deps.log, ctx, ref, items.length, resource.category) : new Map();
  } catch (err) {
    void reserving.then((claim) => claim.done(), () => {});
    throw err;
  }
  const claim = await reserving;
  claim.left = items.length - committed.size;
  try {
    // Items committed by an earlier try are answered from the read models: bring them up to date.
    if (committed.size) await deps.settle(await deps.log.head(), ctx);
    return await writeItems(deps, ctx, resource, items, ref, committed, claim);
  } finally {
    claim.done();
  }
}

/** The items in order (writeBatch), each counted off the batch's claim on ids as it starts. */
async function writeItems(deps: CommandDeps, ctx: WriteContext, resource: BatchResource, items: unknown[], ref: string | undefined, committed: Map<number, { id: number; created: boolean }>, claim: IdClaim): Promise<ItemOutcome[]> {
  // The read models' wait of every item, kept to its furthest position and waited for once below:
  // the batch answers no sooner than each item would have, so read-your-writes is the same.
  let furthest: Position | null = null;
  const itemDeps: CommandDeps = resource.settlesOnce
    ? {
        ...deps,
        settle: (position) => {
          if (position && (!furthest || comparePositions(position, furthest) > 0)) furthest = position;
          return Promise.resolve();
        },
      }
    : deps;

  const prefix = `${resource.category}-`;
  const outcomes: Array<Promise<ItemOutcome>> = [];
  let failure: { error: unknown } | null = null;
  // The record append of the last item that made one: every append of the next item follows it;
  // and that item's end (a race lost there: it appends again, and the next item waits for it).
  let after: Promise<AppendResult> | undefined;
  let afterSettled: Promise<unknown> | undefined;
  for (let i = 0; i < items.length && !failure; i++) {
    const done = committed.get(i);
    if (done) {
      const record = resource.resumed ? await resource.resumed(deps, ctx, done.id) : undefined;
      outcomes.push(Promise.resolve(record ? { ...done, record } : done));
      continue;
    }
    let handedOver!: () => void;
    const appended = new Promise<void>((resolve) => (handedOver = resolve));
    let record: Promise<AppendResult> | undefined;
    // Claims and id blocks are other streams: the item has not reached its record's append yet.
    const onAppend = (stream: string, answer: Promise<AppendResult>) => {
      if (!stream.startsWith(prefix)) return;
      record ??= answer;
      handedOver();
    };
    const itemCtx: WriteContext = { ...ctx, ifMatch: undefined, revisions: undefined, batchItem: ref === undefined ? undefined : `${ref}#${i}`, onAppend, after, afterSettled };
    // Called in an async function so a check that throws at once is the item's answer too.
    const write = (async () => resource.write(itemDeps, itemCtx, items[i]))();
    // Ended well (written, or its own error: nothing written), or failed (the batch's 5xx).
    const ended = write.then(
      () => undefined,
      (err: unknown) => {
        if (!itemsOwn(err)) throw err;
      },
    );
    ended.catch(() => undefined);
    const run = write.then(
      (r): ItemOutcome => r,
      (err: unknown): ItemOutcome => {
        if (itemsOwn(err)) return err;
        failure ??= { error: err };
        return err as DomainError; // not used: the batch fails below
      },
    );
    outcomes.push(run);
    await Promise.race([appended, run]);
    if (record) [after, afterSettled] = [record, ended];
    // Its id taken (or none needed): no longer owed to this batch.
    claim.left--;
  }
  const results = await Promise.all(outcomes);
  // A failure that is not the item's own (the log, the store): the whole batch answers 5xx once
  // every item started has ended, and its retry runs what did not commit.
  if (failure) throw (failure as { error: unknown }).error;
  if (furthest) await deps.settle(furthest, ctx);
  return results;
}

/**
 * An item's own answer (a 4xx, nothing written), not the batch's failure. A write that kept
 * losing its record's append race past its budget (503 record_busy, commands/aggregate.ts) is
 * not the item's fault: the batch answers it (a 5xx, Retry-After), and its retry runs that item
 * and the ones after it again; an item's result is never a 5xx (decisions.md §14).
 */
const itemsOwn = (err: unknown): err is DomainError => err instanceof DomainError && !(err instanceof RecordBusy);

/** The marker prefix of one batch: its key and scope, and the resource (a key is per route). */
export const batchRef = (idem: BatchKey, category: string) => keyRef(idem.scope, idem.key, category);

/**
 * Starts the batch's journal, or finds the earlier try's: the items it committed, by index. A
 * journal older than the key's life belongs to a forgotten use of the same key: start afresh.
 */
async function resume(log: EventLog, ctx: WriteContext, ref: string, items: number, category: string) {
  const stream = `batch-${ref}`;
  const started: BatchStarted = { type: 'BatchStarted', data: { items } };
  const event = { ...started, metadata: metadataOf({ ...ctx, batchItem: undefined }) };
  for (;;) {
    const last = await lastEvent(log, stream);
    try {
      if (last && Date.parse(last.metadata.at) > ctx.now.getTime() - KEY_LIFE_MS) return committedSince(log, ctx.team, last.position, ref, category);
      await log.append(stream, [event], last ? last.revision : NO_STREAM);
      return new Map<number, { id: number; created: boolean }>();
    } catch (err) {
      if (!(err instanceof WrongExpectedRevision)) throw err;
    }
  }
}

/**
 * The items of batch `ref` whose record's append committed after `from`: the record's id, and
 * whether the item created it. The earlier try has ended (its key was abandoned, or taken over
 * from a process gone), so its appends are all at or before the head read here; read so that
 * none is missed (teamEventsUpTo).
 */
async function committedSince(log: EventLog, team: number, from: Position, ref: string, category: string) {
  const mark = `${ref}#`;
  const prefix = `${category}-`;
  const found = new Map<number, { id: number; created: boolean }>();
  const to = await log.head();
  if (!to) return found;
  for await (const e of teamEventsUpTo(log, team, from, to, 'a batch')) {
    const item = e.metadata.batchItem;
    if (!item?.startsWith(mark) || !e.stream.startsWith(prefix)) continue;
    const index = Number(item.slice(mark.length));
    const created = e.revision === 0n || (found.get(index)?.created ?? false);
    found.set(index, { id: Number(e.stream.slice(prefix.length)), created });
  }
  return found;
}
