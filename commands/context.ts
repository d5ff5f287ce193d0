import type { EventMetadata, Source } from '../domain/shared/events.js';

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
  /**
   * Told each stream a write hands an append of to the log, before that append commits: a batch
   * starts its next item then, so items keep their order yet share group commits (commands/batch.ts).
   */
  onAppend?: (stream: string) => void;
  /**
   * Present only while tracing is on (decisions.md §15): the span this write happens in (the
   * request's, then the command's), whose children its command, append and wait become.
   */
  trace?: TraceHooks;
}

/** One span as a command sees it (runtime/tracing.ts implements it). */
export interface TraceHooks {
  /** Runs `fn` in a child span of this one; `fn` is given the child's hooks, for its own children. */
  span<T>(name: string, fn: (trace: TraceHooks) => Promise<T>): Promise<T>;
  /** The W3C traceparent of this span, kept in the events a write appends. */
  traceparent(): string | undefined;
}

export const metadataOf = (ctx: WriteContext): EventMetadata => ({
  team: ctx.team,
  source: ctx.source,
  keyName: ctx.keyName,
  correlationId: ctx.correlationId,
  at: ctx.now.toISOString(),
  ...(ctx.batchItem === undefined ? {} : { batchItem: ctx.batchItem }),
  // The write's trace, so the webhook attempts it causes can link to it (decisions.md §15).
  ...(ctx.trace ? { traceparent: ctx.trace.traceparent() } : {}),
});
