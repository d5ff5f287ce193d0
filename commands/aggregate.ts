import type { DomainEvent, EventMetadata, Evolver, Position, RecordedEvent } from '../domain/shared/events.js';
import { type Loaded, load, revisionOfStream } from '../eventlog/load.js';
import { type AppendResult, type EventLog, NO_STREAM, WrongExpectedRevision } from '../eventlog/port.js';
import { currentRevision } from '../domain/shared/revision.js';
import { preconditionFailed, recordBusy } from '../domain/shared/errors.js';
import { Backoff } from '../eventlog/backoff.js';
import type { WriteContext } from './context.js';
import { appendAfter, handing, metadataOf, stampNow } from './context.js';
import { earlierAppend } from './resume.js';

export interface Decided<S> {
  state: S;
  events: DomainEvent[];
  /** Log position of the last appended event; null when the decision appended nothing. */
  position: Position | null;
  revision: bigint | null;
  /** The metadata the events were appended with; null when the decision appended nothing. */
  metadata: EventMetadata | null;
  /** The stream's events the decision was made on, before its own (none for a new stream). */
  prior: RecordedEvent[];
}

export interface HandleOptions<S> {
  /**
   * Called when the append lost a race. Return normally to retry on fresh state (the default);
   * throw a domain error (task_busy, not_open) to answer it instead.
   */
  onConflict?: (fresh: Loaded<S>, conflict: WrongExpectedRevision, attempt: number) => void;
  /**
   * How long (ms) a write that keeps losing races is decided again before it answers
   * `503 record_busy` with nothing written (CONTENTION_BUDGET_MS by default).
   */
  budgetMs?: number;
  /**
   * The stream is named by an id just allocated, so it cannot exist yet: the first decision is
   * made on the initial state without reading. The append still expects no stream, so were it
   * to exist after all, the conflict is handled as any other (loaded, decided again).
   */
  newStream?: boolean;
}

/**
 * How long a write that keeps losing the append race to other writers of its record is decided
 * again: each lost race is one other writer landing, so N concurrent writers of one record need
 * up to N tries; a fixed count of tries answered the (N+1)-th writer with the raw conflict (a 500).
 * A few seconds lets 50 concurrent writers of one record all land; past it the write answers
 * `503 record_busy` with Retry-After, nothing written.
 */
export const CONTENTION_BUDGET_MS = 5_000;

/**
 * The budget of a cascade's write (a deleted constituent's volunteer deleted, a deleted volunteer's
 * tasks unassigned), done after its request's own write committed: it cannot answer "nothing
 * written", so it is decided again until it lands, however long its record stays contended.
 */
export const UNTIL_DONE = Infinity;

/**
 * The waits between tries after a lost race: doubling from 1 ms to 64 ms, each drawn at random
 * below its nominal value (full jitter), so the losers of one race do not all read and append
 * again in the same instant and lose again to each other.
 */
const CONTENTION_BACKOFF = { initialMs: 1, maxMs: 64 };

/**
 * The retries of one write after lost append races (handle(), commands/claims.ts): made at the
 * first lost race only, so a write that wins its first append allocates nothing for them.
 */
export class Contention {
  private readonly backoff = new Backoff(CONTENTION_BACKOFF);
  private readonly deadline: number;

  constructor(budgetMs = CONTENTION_BUDGET_MS) {
    this.deadline = Date.now() + budgetMs;
  }

  /**
   * Waits before the next try; throws `503 record_busy` instead when the budget would be spent.
   * Call it only where nothing of the write is in the log (its append lost): the answer is
   * retryable as it is.
   */
  async lost(): Promise<void> {
    const wait = Math.floor(Math.random() * this.backoff.next());
    if (Date.now() + wait >= this.deadline) throw recordBusy();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
}

/**
 * Load, decide, append with the expected revision. Another writer's append between our load and
 * our append is a conflict: by default the command is decided again on fresh state; onConflict
 * may turn it into an answer instead.
 */
export function handle<S>(
  log: EventLog,
  stream: string,
  evolver: Evolver<S>,
  ctx: WriteContext,
  decide: (state: S, loaded: Loaded<S>) => DomainEvent[],
  options: HandleOptions<S> = {},
): Promise<Decided<S>> {
  // Traced, the command is a span of the request: its load, decide and append (a child) within.
  if (ctx.trace) return ctx.trace.span(`command ${stream.slice(0, Math.max(0, stream.indexOf('-')))}`, (trace) => handleOnce(log, stream, evolver, { ...ctx, trace }, decide, options));
  return handleOnce(log, stream, evolver, ctx, decide, options);
}

async function handleOnce<S>(
  log: EventLog,
  stream: string,
  evolver: Evolver<S>,
  ctx: WriteContext,
  decide: (state: S, loaded: Loaded<S>) => DomainEvent[],
  options: HandleOptions<S>,
): Promise<Decided<S>> {
  // A retry of a keyed write whose earlier try committed here answers from that append.
  if (ctx.idem?.earlier) {
    const earlier = await earlierAppend(log, ctx, stream);
    if (earlier) return resumed(log, stream, evolver, ctx, earlier);
  }
  let contention: Contention | undefined;
  for (let attempt = 1; ; attempt++) {
    const loaded = attempt === 1 && options.newStream ? { state: evolver.initial(), revision: null, events: [] } : await load(log, stream, evolver);
    // Stamped once loaded, not when the request began: every write of the record the load read
    // committed before this, so a record's writes run forward in time whatever ran before, however
    // slow the load, however many races it lost (history and asOf read them by their instants, decisions.md §10).
    stampNow(ctx);
    const events = decide(loaded.state, loaded);
    // If-Match (decisions.md §11) is checked on the state the decision was made on (after the
    // decision's own errors, so another team's record is still not_found), and the append
    // expects that state's stream revision: a write racing in between is a conflict, answered
    // 412 below with nothing written.
    const recordRevision = currentRevision(loaded.events);
    const expect = ctx.ifMatch?.stream === stream ? ctx.ifMatch : undefined;
    if (expect && !expect.matches(recordRevision)) throw preconditionFailed(recordRevision);
    if (events.length === 0) {
      ctx.revisions?.set(stream, recordRevision);
      return { state: loaded.state, events, position: null, revision: loaded.revision, metadata: null, prior: loaded.events };
    }
    try {
      // One append is one write: every event of it carries the revision it makes.
      const meta = metadataOf(ctx);
      meta.revision = recordRevision + 1;
      // The log's own answer, for onAppend: a later append may have to follow it (appendAfter).
      let answer!: Promise<AppendResult>;
      const append = () => (answer = appendAfter(log, ctx, stream, events.map((e) => ({ type: e.type, data: e.data, metadata: meta })), loaded.revision === null ? NO_STREAM : loaded.revision));
      handing(ctx);
      // Traced, the append is a span of the command's (started at once: onAppend still comes before it commits).
      const appending = ctx.trace ? ctx.trace.span('append', append) : append();
      ctx.onAppend?.(stream, answer);
      const r = await appending;
      if (ctx.written) ctx.written.position = r.position;
      const state = events.reduce(evolver.evolve, loaded.state);
      ctx.revisions?.set(stream, recordRevision + 1);
      return { state, events, position: r.position, revision: r.nextExpectedRevision, metadata: meta, prior: loaded.events };
    } catch (err) {
      if (!(err instanceof WrongExpectedRevision)) throw err;
      if (expect) throw preconditionFailed(await revisionOfStream(log, stream));
      if (options.onConflict) options.onConflict(await load(log, stream, evolver), err, attempt);
      await (contention ??= new Contention(options.budgetMs)).lost();
    }
  }
}

/**
 * What handle() answered when it made `appended` (an earlier try of this keyed write, found in the
 * log: commands/resume.ts): its events, position and metadata, and the state they left. Nothing is
 * decided or appended, and If-Match is not asked again: the earlier try passed it, and the revision
 * it named is behind the append it allowed.
 */
async function resumed<S>(log: EventLog, stream: string, evolver: Evolver<S>, ctx: WriteContext, appended: RecordedEvent[]): Promise<Decided<S>> {
  const last = appended[appended.length - 1];
  const upTo = (await log.readStream(stream)).filter((e) => e.revision <= last.revision);
  const state = upTo.reduce(evolver.evolve, evolver.initial());
  const metadata = last.metadata;
  ctx.revisions?.set(stream, metadata.revision ?? currentRevision(upTo));
  if (ctx.written) ctx.written.position = last.position;
  const prior = upTo.filter((e) => e.revision < appended[0].revision);
  return { state, events: appended.map((e) => ({ type: e.type, data: e.data })), position: last.position, revision: last.revision, metadata, prior };
}
