import { createHash } from 'node:crypto';
import type { EventMetadata, Position, RecordedEvent, Source } from '../domain/shared/events.js';
import { type AppendResult, type EventLog, type ExpectedRevision, type NewEvent, WrongExpectedRevision } from '../eventlog/port.js';

/**
 * The marker of what a request under an Idempotency-Key writes, stamped on its events: its scope
 * and key and what it marks (a batch's resource, or a single write), hashed so that no key shows.
 */
export const keyRef = (scope: string, key: string, tag: string) => createHash('sha256').update(`${scope}\n${key}\n${tag}`).digest('hex').slice(0, 32);

/** Who is writing, and when: the metadata every event of a command carries. */
export interface WriteContext {
  team: number;
  source: Source;
  keyName: string | null;
  correlationId: string;
  now: Date;
  /**
   * `If-Match` (decisions.md §11): a write to this stream whose record revision it does not
   * match is 412 precondition_failed, with nothing written (commands/aggregate.ts handle()).
   */
  ifMatch?: { stream: string; matches: (revision: number) => boolean };
  /** Filled by handle(): each written stream's record revision after the write, for `ETag`. */
  revisions?: Map<string, number>;
  /** The batch item this write is (decisions.md §14), stamped on its events: commands/batch.ts. */
  batchItem?: string;
  /** The single write's Idempotency-Key (decisions.md §11), stamped on its events: commands/resume.ts. */
  idem?: KeyedWrite;
  /**
   * Told the position of each append of this write once it committed (handle()), so an answer
   * that fails after it can say the write is recorded (api/errors.ts, 503 write_pending).
   */
  written?: { position: Position | null };
  /**
   * Told each stream a write hands an append of to the log, and the log's answer, before that
   * append commits: a batch starts its next item then, so items keep their order yet share group
   * commits (commands/batch.ts).
   */
  onAppend?: (stream: string, answer: Promise<AppendResult>) => void;
  /**
   * An append (the log's answer) that every append of this write must follow: one of a batch's
   * earlier items (commands/batch.ts). Passed as append's `after` (appendAfter, below).
   */
  after?: Promise<AppendResult>;
  /** The end of the write that made `after` (a batch's earlier item): AppendOrder.settled. */
  afterSettled?: Promise<unknown>;
  /**
   * Present only while tracing is on (decisions.md §15): the span this write happens in (the
   * request's, then the command's), whose children its command, append and wait become.
   */
  trace?: TraceHooks;
}

/**
 * A single /api/v1 write under an Idempotency-Key (decisions.md §11). Every event it appends
 * carries `idempotencyRef: ref` (commands/context.ts metadataOf). A retry that takes the key over
 * from an earlier try that committed and then died, or answered 5xx, is given where that try
 * began (`earlier.from`): each append the write would make is first looked for among the team's
 * events written since, and one found is answered from instead of being appended again (handle(),
 * newId() of commands/resume.ts). A batch has its own journal (commands/batch.ts) and goes without.
 */
export interface KeyedWrite {
  ref: string;
  /**
   * Set on a takeover: the log's head when the earlier try of the key took it (`from`), and when
   * this one had taken it over (`to`; the earlier try appends nothing after), between which its
   * appends are looked for.
   */
  earlier?: { from: Position | null; to: Position | null };
  /** What the earlier try appended, by stream, oldest first: looked up once, at the first need. */
  found?: Promise<Map<string, RecordedEvent[]>>;
  /** An append of the earlier try was answered from: this write repeats it (Idempotent-Replayed). */
  replayed?: boolean;
  /**
   * This try handed an append to the log (set before the append, which may commit though its
   * answer is lost): its key is left for a retry to resume after a 5xx, not forgotten.
   */
  handed?: boolean;
}

/** Called just before a write hands an append to the log: see KeyedWrite.handed. */
export const handing = (ctx: WriteContext): void => {
  if (ctx.idem) ctx.idem.handed = true;
};

/**
 * An append of the write, after `ctx.after` if it has one: handed to a log that orders appends at
 * once, else once that one has committed (or lost a race, its writer deciding again), and never
 * if it failed, so nothing is written past a batch's item whose append failed (decisions.md §14).
 */
export function appendAfter(log: EventLog, ctx: WriteContext, stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
  const after = ctx.after;
  // A batch's item (told of its appends): the next item's may follow this one.
  const followed = ctx.onAppend !== undefined;
  if (log.ordersAppends && (after || followed)) return log.append(stream, events, expected, { after, followed, settled: ctx.afterSettled });
  if (!after) return log.append(stream, events, expected);
  const append = () => log.append(stream, events, expected);
  const failed = (err: unknown) => {
    throw new Error(`not appended to ${stream}: an append it follows failed`, { cause: err });
  };
  return after.then(append, (err: unknown) => {
    if (!(err instanceof WrongExpectedRevision)) return failed(err);
    // That one lost a race: its writer appends again; this one goes once that writer ended well.
    return ctx.afterSettled ? ctx.afterSettled.then(append, failed) : append();
  });
}

/** One span as a command sees it (runtime/tracing.ts implements it). */
export interface TraceHooks {
  /** Runs `fn` in a child span of this one; `fn` is given the child's hooks, for its own children. */
  span<T>(name: string, fn: (trace: TraceHooks) => Promise<T>): Promise<T>;
  /** The W3C traceparent of this span, kept in the events a write appends. */
  traceparent(): string | undefined;
}

/**
 * The context of a write done on a cascade's behalf by the request that raced it (a registration
 * deleting its volunteer, an assignment unassigning its deleted volunteer): who and when, not what
 * marks the request's own appends (its Idempotency-Key's ref, its batch item), so that a retry
 * resuming the request takes only its own write for its own and does the cascade's again (a no-op
 * once done), nor a batch's ordering hooks, which are for the item's record append.
 */
export const cascadeContext = (ctx: WriteContext): WriteContext => ({ team: ctx.team, source: ctx.source, keyName: ctx.keyName, correlationId: ctx.correlationId, now: ctx.now, trace: ctx.trace });

/**
 * Moves a write's instant (`now`, its events' `at`) to the present, never back: handle() stamps
 * each decision once its record is loaded, so a write's instant follows every write it loaded
 * (which may have committed after this request began, or while it lost races).
 */
export function stampNow(ctx: WriteContext): void {
  const now = Date.now();
  if (now > ctx.now.getTime()) ctx.now = new Date(now);
}

export const metadataOf = (ctx: WriteContext): EventMetadata => ({
  team: ctx.team,
  source: ctx.source,
  keyName: ctx.keyName,
  correlationId: ctx.correlationId,
  at: ctx.now.toISOString(),
  ...(ctx.batchItem === undefined ? {} : { batchItem: ctx.batchItem }),
  ...(ctx.idem === undefined ? {} : { idempotencyRef: ctx.idem.ref }),
  // The write's trace, so the webhook attempts it causes can link to it (decisions.md §15).
  ...(ctx.trace ? { traceparent: ctx.trace.traceparent() } : {}),
});
