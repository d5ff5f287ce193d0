import { ANY as ESDB_ANY, BACKWARDS, END, ErrorType, EventStoreDBClient, excludeSystemEvents, isCommandError, jsonEvent, NO_STREAM as ESDB_NO_STREAM, START } from '@eventstore/db-client';
import type { AllStreamResolvedEvent, AllStreamSubscription, AppendExpectedRevision, ResolvedEvent, WrongExpectedVersionError } from '@eventstore/db-client';
import { EsdbTeamReader } from './esdb-team.js';
import { Backoff } from './backoff.js';
import { Pause } from './pause.js';
import { ANY, NO_STREAM, WrongExpectedRevision } from './port.js';
import { comparePositions } from '../domain/shared/events.js';
import type { AppendResult, EventLog, ExpectedRevision, NewEvent, SubscribeOptions, Subscription } from './port.js';
import type { EventMetadata, Position, RecordedEvent } from '../domain/shared/events.js';

export interface EsdbEventLogOptions {
  /**
   * First and longest wait between resubscriptions after a dropped connection (doubling, with
   * jitter). It retries for as long as it takes, telling onDropped of each failed attempt.
   */
  retryInitialMs?: number;
  retryMaxMs?: number;
  /** While catching up through events the filter skips, report a checkpoint at least this often. */
  checkpointEvery?: number;
}

type Settings = Required<EsdbEventLogOptions>;
type Handler = (event: RecordedEvent) => Promise<void> | void;

const DEFAULTS: Settings = { retryInitialMs: 100, retryMaxMs: 30_000, checkpointEvery: 256 };
/** The server's "no position" (-1 as an unsigned 64-bit integer). */
const NO_POSITION = 2n ** 64n - 1n;

/**
 * The production event log on EventStoreDB. The port was modelled on it, so this adapter only
 * translates: expected revisions, WrongExpectedVersion, $all positions and catch-up subscriptions.
 */
export class EsdbEventLog implements EventLog {
  private readonly settings: Settings;
  private readonly followers = new Set<Follower>();
  private closed = false;

  constructor(
    private readonly client: EventStoreDBClient,
    options: EsdbEventLogOptions = {},
  ) {
    this.settings = { ...DEFAULTS, ...options };
  }

  /** From `esdb://host:2113?tls=false` (TURNOUT_EVENTSTORE_URL). */
  static connect(connectionString: string, options?: EsdbEventLogOptions): EsdbEventLog {
    return new EsdbEventLog(EventStoreDBClient.connectionString(connectionString), options);
  }

  async append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (this.closed) throw new Error('event log is closed');
    if (events.length === 0) throw new Error('append needs at least one event');
    const proposed = events.map((e) => {
      // The client serialises inside a promise executor, where a throw (a bigint, a cycle) leaves the
      // append pending forever: serialise once here so such an append fails, and fails alone.
      JSON.stringify(e.data);
      JSON.stringify(e.metadata);
      return jsonEvent({ type: e.type, data: e.data, metadata: { ...e.metadata } });
    });
    let result;
    try {
      result = await this.client.appendToStream(stream, proposed, { expectedRevision: toEsdbExpected(expected) });
    } catch (err) {
      if (isErrorOfType(err, ErrorType.WRONG_EXPECTED_VERSION)) {
        const actual = (err as WrongExpectedVersionError).actualVersion;
        throw new WrongExpectedRevision(stream, expected, typeof actual === 'bigint' ? actual : null);
      }
      throw err;
    }
    const position = knownPosition(result.position) ?? (await this.lastPosition(stream));
    return { nextExpectedRevision: result.nextExpectedRevision, position };
  }

  readStream(stream: string): Promise<RecordedEvent[]> {
    return this.collect(this.client.readStream(stream));
  }

  readStreamBackwards(stream: string, maxCount: number): Promise<RecordedEvent[]> {
    return this.collect(this.client.readStream(stream, { direction: BACKWARDS, fromRevision: END, maxCount }));
  }

  /** A stream's events up to `position`: a stream's events lie in the log in revision order, so the first one past it ends the read. */
  readStreamUntil(stream: string, position: Position): Promise<RecordedEvent[]> {
    return this.collect(this.client.readStream(stream), (e) => comparePositions(e.position, position) > 0);
  }

  /** The events of a stream read (a missing stream is empty), until one is `past` the end wanted. */
  private async collect(read: ReturnType<EventStoreDBClient['readStream']>, past?: (e: RecordedEvent) => boolean): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    try {
      for await (const resolved of read) {
        const e = toRecorded(resolved);
        if (!e) continue;
        if (past?.(e)) break;
        out.push(e);
      }
    } catch (err) {
      if (isErrorOfType(err, ErrorType.STREAM_NOT_FOUND)) return [];
      throw err;
    } finally {
      // Ends the server's read when the loop stopped early; a read that ran out is already done.
      if (past) await read.cancel().catch(() => undefined);
    }
    return out;
  }

  private teams?: EsdbTeamReader;

  /** The server-side projection of esdb-team.ts and its reader (the projector checks it: runtime/team-feed.ts). */
  teamFeed(): EsdbTeamReader {
    return (this.teams ??= new EsdbTeamReader(this.client, toRecorded));
  }

  /** One team's events, through the server-side projection of esdb-team.ts. */
  readTeam(team: number, from: Position | null, limit: number, inclusive = false): Promise<RecordedEvent[]> {
    return this.teamFeed().read(team, from, limit, inclusive);
  }

  /**
   * One team's events read from `$all` itself, not from the team's projected stream: complete up
   * to `to` at once, where the links trail the append (esdb-team.ts). It reads every team's events
   * in between, so only the rare scans of an earlier try use it (eventlog/load.ts teamEventsUpTo).
   */
  async readTeamUpTo(team: number, from: Position | null, to: Position, limit: number): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    const read = this.client.readAll({ fromPosition: from ?? START, resolveLinkTos: false });
    try {
      for await (const resolved of read) {
        const e = toRecorded(resolved);
        // A read from a position starts at the event there, which the cursor has had.
        if (!e || (from && comparePositions(e.position, from) <= 0)) continue;
        if (comparePositions(e.position, to) > 0) break;
        if (e.metadata.team !== team) continue;
        out.push(e);
        if (out.length >= limit) break;
      }
    } finally {
      // Stop the server walking the rest of $all, whatever ended the loop (a throw too: leaving
      // the loop ends the client's stream, not the gRPC call under it, which has no deadline);
      // a read that reached the end of $all has nothing left to cancel.
      await read.cancel().catch(() => undefined);
    }
    return out;
  }

  async head(): Promise<Position | null> {
    // The newest event a follower would see: system events ($-typed) are never delivered.
    const read = this.client.readAll({ direction: BACKWARDS, fromPosition: END });
    try {
      for await (const resolved of read) {
        const e = resolved.event;
        if (e && !e.type.startsWith('$')) return knownPosition(e.position);
      }
      return null;
    } finally {
      // Stop the server walking the rest of $all backwards.
      await read.cancel().catch(() => undefined);
    }
  }

  subscribe(from: Position | null, handler: Handler, options: SubscribeOptions = {}): Subscription {
    if (this.closed) throw new Error('event log is closed');
    const follower = new Follower(this.client, from, handler, options, this.settings);
    this.followers.add(follower);
    void follower.done.finally(() => this.followers.delete(follower));
    return follower;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.followers].map((f) => f.stop()));
    await this.client.dispose();
  }

  /** The position of a stream's last event, for the rare append the server answers without one. */
  private async lastPosition(stream: string): Promise<Position> {
    for await (const resolved of this.client.readStream(stream, { direction: BACKWARDS, fromRevision: END, maxCount: 1 })) {
      const p = knownPosition(resolved.event?.position);
      if (p) return p;
    }
    throw new Error(`EventStoreDB gave no log position for the append to ${stream}`);
  }
}

/** A server checkpoint, carried through the subscription's own buffer (see Follower.open). */
class CheckpointMarker {
  constructor(readonly position: Position) {}
}

/** The handler or onCheckpoint failed: the subscription fails for good, as the SQLite one does. */
class ConsumerFailure extends Error {
  constructor(readonly failure: unknown) {
    super('subscription handler failed');
  }
}

/**
 * One catch-up subscription to $all, resubscribed after a drop from the last position it went
 * through (positions are exclusive, so nothing is delivered twice and nothing is skipped).
 */
class Follower implements Subscription {
  readonly done: Promise<void>;
  private stopping = false;
  private current: AllStreamSubscription | null = null;
  /** Where a resubscription starts: the last event delivered or skipped, or the last checkpoint. */
  private resume: Position | null;
  /** The furthest position the follower has been told about, by an event or a checkpoint. */
  private reported: Position | null;
  private skipped = 0;
  /** Set by a drop; a confirmed subscription or a delivery clears it (and says so). */
  private dropped = false;
  private readonly backoff = new Pause();

  constructor(
    private readonly client: EventStoreDBClient,
    from: Position | null,
    private readonly handler: Handler,
    private readonly options: SubscribeOptions,
    private readonly settings: Settings,
  ) {
    this.resume = from;
    this.reported = from;
    this.done = this.run();
  }

  async stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      this.backoff.wake();
      // Cancelling the server call does not end the stream it feeds: destroy that too, so the loop
      // ends as soon as the running handler returns. The cancel itself need not be awaited.
      void this.current?.unsubscribe().catch(() => undefined);
      this.current?.destroy();
    }
    await this.done;
  }

  private async run(): Promise<void> {
    const retry = new Backoff({ initialMs: this.settings.retryInitialMs, maxMs: this.settings.retryMaxMs });
    while (!this.stopping) {
      const sub = this.open();
      let dropped: unknown = new Error('EventStoreDB ended the subscription');
      try {
        for await (const item of sub as AsyncIterable<AllStreamResolvedEvent | CheckpointMarker>) {
          this.resubscribed();
          retry.reset();
          try {
            await this.consume(item, sub);
          } catch (err) {
            throw err instanceof ConsumerFailure ? err : new ConsumerFailure(err);
          }
          if (this.stopping) break;
        }
      } catch (err) {
        dropped = err;
      } finally {
        this.current = null;
        void sub.unsubscribe().catch(() => undefined);
        sub.destroy();
      }
      if (this.stopping) return;
      if (dropped instanceof ConsumerFailure) return this.options.onError?.(dropped.failure);
      // Errors no resubscription here can cure go to the follower, which starts over from its checkpoint.
      if (isPermanent(dropped)) return this.options.onError?.(dropped);
      this.dropped = true;
      this.options.onDropped?.(dropped);
      await this.backoff.for(retry.next());
    }
  }

  private open(): AllStreamSubscription {
    const sub = this.client.subscribeToAll({
      fromPosition: this.resume ?? START,
      filter: excludeSystemEvents({
        // The client calls this as soon as the checkpoint arrives, while events read before it may
        // still wait in the buffer for the handler. Pushed through that same buffer, the checkpoint
        // stays behind them: it never claims an event that was not applied yet.
        checkpointReached: (s, position) => {
          try {
            s.push(new CheckpointMarker(position));
          } catch {
            // The stream is already closing; the next subscription will report it again.
          }
        },
      }),
    });
    // Errors reach the loop through the iterator; this keeps a late one from crashing the process.
    sub.on('error', () => undefined);
    // A subscription the server confirmed was a success, however quiet the log stays afterwards.
    sub.once('confirmation', () => this.resubscribed());
    this.current = sub;
    return sub;
  }

  private async consume(item: AllStreamResolvedEvent | CheckpointMarker, sub: AllStreamSubscription): Promise<void> {
    if (item instanceof CheckpointMarker) return this.checkpoint(item.position);
    const position = knownPosition(item.event?.position);
    if (!position) return;
    const event = toRecorded(item);
    if (event && (!this.options.filter || this.options.filter(event.type))) {
      await this.handler(event);
      this.resume = position;
      this.reported = position;
      this.skipped = 0;
      return;
    }
    this.resume = position;
    // A stretch the follower does not want: report where it ends (nothing more is buffered), or
    // every so often while catching up, so a checkpoint moves on while nothing relevant is written.
    this.skipped++;
    if (sub.readableLength === 0 || this.skipped >= this.settings.checkpointEvery) await this.checkpoint(position);
  }

  private async checkpoint(reported: Position): Promise<void> {
    this.skipped = 0;
    // On an empty database the server reports its "end" sentinel (2^64-1) as the checkpoint: no
    // event is there, and stored it would put the follower past every event written later.
    const position = knownPosition(reported);
    if (!position) return;
    // Server checkpoints can lag behind events already delivered: only ever move forward.
    if (this.reported && comparePositions(position, this.reported) <= 0) return;
    this.reported = position;
    if (!this.resume || comparePositions(position, this.resume) > 0) this.resume = position;
    await this.options.onCheckpoint?.(position);
  }

  private resubscribed(): void {
    if (!this.dropped) return;
    this.dropped = false;
    this.options.onResubscribed?.();
  }

}

function toEsdbExpected(expected: ExpectedRevision): AppendExpectedRevision {
  if (expected === NO_STREAM) return ESDB_NO_STREAM;
  if (expected === ANY) return ESDB_ANY;
  return expected;
}

function knownPosition(p: { commit: bigint; prepare: bigint } | undefined): Position | null {
  if (!p || p.commit === NO_POSITION || p.prepare === NO_POSITION || p.commit < 0n || p.prepare < 0n) return null;
  return { commit: p.commit, prepare: p.prepare };
}

/** Only this service's events: JSON and not system ($-typed) events. */
function toRecorded(resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | null {
  const e = resolved.event;
  if (!e || !e.isJson || e.type.startsWith('$')) return null;
  // Every event Turnout writes carries its metadata (EventMetadata: the team, the source); a JSON
  // event without any is another producer's in the same database, skipped as the team projection
  // skips it (esdb-team.ts), so that no reader takes its missing team for one of ours.
  if (typeof e.metadata !== 'object' || e.metadata === null) return null;
  const position = knownPosition(e.position);
  if (!position) throw new Error(`EventStoreDB sent ${e.streamId}@${e.revision} without a log position`);
  const [data, metadata] = [e.data as Record<string, unknown>, e.metadata as unknown as EventMetadata];
  return { stream: e.streamId, revision: e.revision, position, type: e.type, data, metadata };
}

function isErrorOfType(err: unknown, type: ErrorType): boolean {
  return err instanceof Error && isCommandError(err) && err.type === type;
}

/** Errors a resubscription cannot cure. */
function isPermanent(err: unknown): boolean {
  return [ErrorType.ACCESS_DENIED, ErrorType.INVALID_ARGUMENT, ErrorType.UNSUPPORTED].some((t) => isErrorOfType(err, t));
}
