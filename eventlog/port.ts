/**
 * The event log port. It is modelled on EventStoreDB so that its adapter maps one to one:
 * stream revisions are bigints from 0, `$all` positions are {commit, prepare} pairs, and an
 * append states what it expects of the stream (no stream yet, any, or an exact revision).
 */
import type { MessagePort } from 'node:worker_threads';
import type { EventMetadata, Position, RecordedEvent } from '../domain/shared/events.js';

/**
 * An event to append. Its data and metadata are JSON data built from literals, spreads and
 * copies: own enumerable string keys holding plain values, with no getters, symbol keys,
 * non-enumerable properties or proxies. A log hands the objects themselves to its followers where
 * JSON would give them back unchanged (json-exact.ts), and that check, walked on every append,
 * looks only at what JSON.stringify reads through `for...in`; it does not look for those.
 */
export interface NewEvent<T extends string = string, D = Record<string, unknown>> {
  type: T;
  data: D;
  metadata: EventMetadata;
}

export const NO_STREAM = 'no_stream' as const;
export const ANY = 'any' as const;
export type ExpectedRevision = typeof NO_STREAM | typeof ANY | bigint;

export interface AppendResult {
  /** Revision of the last event written. */
  nextExpectedRevision: bigint;
  /** Log position of the last event written. */
  position: Position;
}

/** rewriteStream asked of a stream this log cannot rewrite (on EventStoreDB, any but a constituent's, whose key an erasure destroys). */
export class StreamNotRewritable extends Error {
  constructor(readonly stream: string) {
    super(`this log cannot rewrite ${stream}: its events are immutable`);
    this.name = 'StreamNotRewritable';
  }
}

/** The port's only conflict: the stream was not at the expected revision. */
export class WrongExpectedRevision extends Error {
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    /** The stream's revision when the append was refused; null when it does not exist. */
    readonly actual: bigint | null,
  ) {
    super(`stream ${stream}: expected revision ${String(expected)}, actual ${actual === null ? 'none' : String(actual)}`);
    this.name = 'WrongExpectedRevision';
  }
}

export interface Subscription {
  /** Stops delivery; resolves once the handler is no longer running. */
  stop(): Promise<void>;
}

export interface SubscribeOptions {
  /** Only events whose type passes are delivered (system and bookkeeping events are skipped). */
  filter?: (type: string) => boolean;
  /**
   * Called with the position of filtered-out stretches so that a follower's checkpoint can move
   * on while nothing it cares about is written (EventStoreDB's checkpoint reached).
   */
  onCheckpoint?: (position: Position) => Promise<void> | void;
  /**
   * Called when the subscription has stopped for good: the handler threw, or the adapter cannot
   * go on by itself. The follower resubscribes (eventlog/follower.ts).
   */
  onError?: (error: unknown) => void;
  /** Called for each lost connection the adapter retries by itself (EventStoreDB). */
  onDropped?: (error: unknown) => void;
  /** Called once such a retry has succeeded. */
  onResubscribed?: () => void;
}

/** How an append stands to others of the same writer (a batch's items: commands/batch.ts). */
export interface AppendOrder {
  /**
   * An append this one must follow, as this log answered it (one given `followed`). This one is
   * then committed only with it or after it has committed, and fails, writing nothing, if it failed
   * with anything but WrongExpectedRevision (whose writer decides again: not a failure). A batch's
   * items so write nothing past the one that failed (decisions.md §14).
   */
  after?: Promise<AppendResult>;
  /** A later append will name this one's answer as its `after`: the log keeps track of it (only then). */
  followed?: boolean;
  /**
   * The end of the writer of `after` (a batch's earlier item): where `after` lost a race, its
   * writer appends again, and this one goes only once that writer ended well.
   */
  settled?: Promise<unknown>;
}

export interface EventLog {
  /** `order`, heeded only by a log that `ordersAppends`: how this append stands to others (AppendOrder). */
  append(stream: string, events: NewEvent[], expected: ExpectedRevision, order?: AppendOrder): Promise<AppendResult>;
  /**
   * The log heeds append's `after` (the embedded one, in its group commit): a writer need not wait
   * for an append to commit before handing the log the next one that must follow it.
   */
  readonly ordersAppends?: boolean;
  /** Every event of a stream, oldest first; a missing stream is empty. */
  readStream(stream: string): Promise<RecordedEvent[]>;
  /**
   * The newest `maxCount` events of a stream, newest first; a missing stream is empty. Readers
   * that need only a stream's tail (the id allocator) then read a few events, not the stream.
   */
  readStreamBackwards?(stream: string, maxCount: number): Promise<RecordedEvent[]>;
  /**
   * A stream's last revision (null when it does not exist), read without its events: the cheap
   * check that a cached state of the stream is still current (the webhook worker's endpoints).
   */
  streamRevision?(stream: string): Promise<bigint | null>;
  /**
   * The events of a stream at or before a log position, oldest first: the stream as it stood
   * then, without reading what was appended to it since (the dispatcher's payload history).
   */
  readStreamUntil?(stream: string, position: Position): Promise<RecordedEvent[]>;
  /**
   * Up to `limit` events written for one team (metadata.team) after `from` (null = from the start;
   * `inclusive`: the event at `from` too), in log order, without reading other teams' events (the
   * change feed, decisions.md §10). Logs that cannot leave it out; the feed is then unavailable.
   */
  readTeam?(team: number, from: Position | null, limit: number, inclusive?: boolean): Promise<RecordedEvent[]>;
  /**
   * As readTeam (`inclusive` aside), read from the log itself and only up to `to` (inclusive):
   * complete as the log stood at `to`, where readTeam reads an index that trails the append
   * (EventStoreDB's links, a moment behind it). For the scans that must not miss an event just
   * appended, a keyed write's or a batch's earlier try (eventlog/load.ts teamEventsUpTo). Logs
   * whose readTeam never trails leave it out, and those scans read readTeam.
   */
  readTeamUpTo?(team: number, from: Position | null, to: Position, limit: number): Promise<RecordedEvent[]>;
  /**
   * Follows the whole log after `from` (exclusive; null = from the start): catches up, then
   * stays live. The handler is awaited before the next event is delivered.
   */
  subscribe(from: Position | null, handler: (event: RecordedEvent) => Promise<void> | void, options?: SubscribeOptions): Subscription;
  /** Position of the last event in the log, or null when it is empty. */
  head(): Promise<Position | null>;
  /**
   * True when every event after `position` (null: the start) was appended through this very log
   * object, answered at once, so a reader settled to `position` misses nothing that another
   * writer (another process) appended. Adapters that cannot tell at once leave it out, and
   * readers then settle to head().
   */
  ownWritesOnlySince?(position: Position | null): boolean;
  /**
   * How many events follow `position` (null: the start), for readiness; only logs that can count
   * them cheaply have it (the embedded one).
   */
  countAfter?(position: Position | null): Promise<number>;
  /**
   * Posts each commit from now on to `port` (its last position and the appends it committed:
   * sqlite-wire.js CommitNotice), from the thread that commits, as soon as the commit is durable
   * and before its appends are answered: the read models' projector thread applies them at once,
   * from the notice, while the log commits the next ones. A
   * later port replaces the earlier. Only a log that commits on a thread of its own has it (the
   * embedded one), and answers false when that log commits on the caller's thread instead.
   */
  tellCommits?(port: MessagePort): Promise<boolean>;
  /**
   * Rewrites the data of a stream's events in place, keeping their type, revision, position and
   * metadata, and leaves none of the old bytes in the log's files (decisions.md §17 erasure).
   * Answers how many events changed. Only a log that can rewrite has it (the embedded one; on
   * EventStoreDB events are immutable).
   */
  rewriteStream?(stream: string, data: (event: RecordedEvent) => Record<string, unknown>): Promise<number>;
  /** Why appends can no longer succeed (say, a commit thread that stopped), or null while they can. */
  failure?(): Error | null;
  close(): Promise<void>;
}
