import { BACKWARDS, END, ErrorType, type EventStoreDBClient, FAULTED, type ResolvedEvent, STOPPED } from '@eventstore/db-client';
import type { FollowerStatus } from './follower.js';
import { comparePositions, type EventMetadata, type Position, type RecordedEvent } from '../domain/shared/events.js';

/**
 * One team's events on EventStoreDB (the change feed, decisions.md §10) without reading the
 * other teams': a continuous server-side projection links every event that names a team in its
 * metadata into `turnout_team-<team>`, and the feed reads that stream with its links resolved,
 * so it gets the original events with their `$all` positions. The links are `$>` events, which
 * followers never see (they exclude system events on the server).
 *
 * Needs the projections subsystem (EVENTSTORE_RUN_PROJECTIONS=All). The projection is created on
 * first use and left running; creating it again is refused by the server, which is fine. Links
 * are written by the projection a moment after the append, so the feed may trail the log by that
 * moment; cursors are `$all` positions, so nothing is skipped.
 */
export const TEAM_PROJECTION = 'turnout-teams';
export const teamStream = (team: number) => `turnout_team-${team}`;

/** Raised with every change of the query: a projection whose state says otherwise is updated at start. */
export const TEAM_PROJECTION_VERSION = 2;

export const TEAM_PROJECTION_QUERY = `fromAll().when({
  $init: function () { return { query: ${TEAM_PROJECTION_VERSION} }; },
  $any: function (s, e) {
    // A projection made by an earlier query kept no state: start one.
    s = s || {};
    s.query = ${TEAM_PROJECTION_VERSION};
    if (e.eventType.charAt(0) === '$' || !e.isJson) return s;
    var m;
    // The getter parses the raw metadata and throws on metadata that is not JSON (a foreign event).
    try { m = e.metadata; } catch (err) { return s; }
    if (typeof m === 'string') { try { m = JSON.parse(m); } catch (err) { return s; } }
    if (m && m.team) linkTo('turnout_team-' + m.team, e);
    return s;
  }
});`;

type Client = Pick<EventStoreDBClient, 'readStream' | 'createProjection' | 'getProjectionStatus' | 'getProjectionState' | 'updateProjection' | 'enableProjection'>;

/** Page ends remembered across all teams, the oldest forgotten first. */
const REMEMBERED_PAGE_ENDS = 1_000;
/** Links read at a probe of the binary search, for one whose event still resolves. */
const PROBE_WINDOW = 16;

/**
 * Reads a team's stream from the link at which a cursor resumes, not from its start: the links
 * are in `$all` order (the projection links events as it reads `$all`), so the first link after
 * a position is found by a binary search over the stream's revisions, and a feed reader's next
 * page (which resumes where its last one ended) is found at once from remembered page ends.
 * Reading from an earlier link than needed is always safe: events at or before the cursor are
 * skipped by their position.
 */
export class EsdbTeamReader {
  private ensured: Promise<void> | null = null;
  /** `team:commit` of the last event of a page read to its link's revision. */
  private readonly pageEnds = new Map<string, bigint>();

  constructor(
    private readonly client: Client,
    private readonly toRecorded: (resolved: ResolvedEvent) => RecordedEvent | null,
  ) {}

  /** What the last check found wrong with the projection (stopped, faulted), or null. */
  private fault: string | null = null;

  /**
   * Makes the projection what this version needs, at the projector's start and every
   * so often after: created when missing, its query updated when its state names another version,
   * started again when stopped. A faulted one is reported (the log and /readyz) and the feed
   * refuses to serve pages it would leave stale; it needs an operator (its reason says why).
   */
  async check(report: (message: string) => void = (m) => console.warn(m)): Promise<void> {
    let status: Awaited<ReturnType<Client['getProjectionStatus']>>;
    try {
      status = await this.client.getProjectionStatus(TEAM_PROJECTION);
    } catch (err) {
      if ((err as { type?: unknown })?.type !== ErrorType.NOT_FOUND) throw err;
      this.ensured = null;
      await this.ensure();
      this.fault = null;
      return;
    }
    if (status.projectionStatus === FAULTED) {
      if (this.fault === null) report(`EventStoreDB projection ${TEAM_PROJECTION} is faulted (${status.stateReason}): the change feed is unavailable until it is fixed and enabled`);
      this.fault = `faulted: ${status.stateReason}`;
      return;
    }
    const state = await this.client.getProjectionState<{ query?: unknown } | null>(TEAM_PROJECTION).catch(() => null);
    if (state?.query !== TEAM_PROJECTION_VERSION) {
      await this.client.updateProjection(TEAM_PROJECTION, TEAM_PROJECTION_QUERY, { emitEnabled: true });
      report(`EventStoreDB projection ${TEAM_PROJECTION}: query updated to version ${TEAM_PROJECTION_VERSION}`);
    }
    if (status.projectionStatus === STOPPED) {
      await this.client.enableProjection(TEAM_PROJECTION);
      report(`EventStoreDB projection ${TEAM_PROJECTION} was stopped: started again`);
    }
    this.fault = null;
    this.ensured = Promise.resolve();
  }

  /** The projection as readiness sees it: failed while faulted (decisions.md §1). */
  status(): FollowerStatus {
    return { name: 'team-feed', state: this.fault ? 'failed' : 'caught_up', behind: null };
  }

  /** Creates the projection once per process; an existing one is kept as it is (check() updates it). */
  private ensure(): Promise<void> {
    return (this.ensured ??= this.client.createProjection(TEAM_PROJECTION, TEAM_PROJECTION_QUERY, { emitEnabled: true, trackEmittedStreams: false }).catch((err: unknown) => {
      if (/exist|conflict/i.test(String((err as Error)?.message ?? err))) return;
      this.ensured = null;
      throw err;
    }));
  }

  async read(team: number, from: Position | null, limit: number, inclusive = false): Promise<RecordedEvent[]> {
    if (this.fault) throw new Error(`the change feed is unavailable: EventStoreDB projection ${TEAM_PROJECTION} is ${this.fault}`);
    try {
      const start = from ? await this.firstRevisionAfter(team, from, inclusive) : 0n;
      return start === null ? [] : await this.readFrom(team, start, from, limit, inclusive);
    } catch (err) {
      if ((err as { type?: unknown })?.type === ErrorType.STREAM_NOT_FOUND) return [];
      throw err;
    }
  }

  private async readFrom(team: number, start: bigint, from: Position | null, limit: number, inclusive: boolean): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    let lastRevision: bigint | null = null;
    const read = this.client.readStream(teamStream(team), { resolveLinkTos: true, fromRevision: start });
    try {
      for await (const resolved of read) {
        const e = this.toRecorded(resolved);
        if (!e || (e.metadata as EventMetadata).team !== team) continue;
        if (from) {
          const c = comparePositions(e.position, from);
          if (c < 0 || (c === 0 && !inclusive)) continue;
        }
        out.push(e);
        lastRevision = linkRevision(resolved);
        if (out.length >= limit) break;
      }
    } finally {
      await read.cancel().catch(() => undefined);
    }
    if (out.length && lastRevision !== null) this.remember(team, out[out.length - 1].position, lastRevision);
    return out;
  }

  /** The revision of the first link whose event comes after `from` (or at it, when inclusive); null for no stream. */
  private async firstRevisionAfter(team: number, from: Position, inclusive: boolean): Promise<bigint | null> {
    const known = this.pageEnds.get(`${team}:${from.commit}`);
    if (known !== undefined) return inclusive ? known : known + 1n;
    const last = await this.probe(team, END);
    if (!last) return null;
    let lo = 0n;
    let hi = last.revision + 1n;
    while (lo < hi) {
      const mid = (lo + hi) / 2n;
      const at = await this.probe(team, mid);
      // Nothing resolves from mid on, within the window: reading from mid is the safe side.
      if (!at || at.position === null) {
        hi = mid;
        continue;
      }
      const c = comparePositions(at.position, from);
      if (c > 0 || (c === 0 && inclusive)) hi = mid;
      else lo = at.revision + 1n;
    }
    // Equal unless the links were out of order: then the earlier, the safe side.
    return hi < lo ? hi : lo;
  }

  /** The first link at or after `revision` whose event resolves (the last link for END), with its event's position. */
  private async probe(team: number, revision: bigint | typeof END): Promise<{ revision: bigint; position: Position | null } | null> {
    const backwards = revision === END;
    const read = this.client.readStream(teamStream(team), {
      resolveLinkTos: true,
      fromRevision: revision,
      maxCount: backwards ? 1 : PROBE_WINDOW,
      ...(backwards ? { direction: BACKWARDS } : {}),
    });
    try {
      for await (const resolved of read) {
        const at = linkRevision(resolved);
        if (at === null) continue;
        const e = this.toRecorded(resolved);
        if (e || backwards) return { revision: at, position: e?.position ?? null };
      }
      return null;
    } finally {
      await read.cancel().catch(() => undefined);
    }
  }

  private remember(team: number, position: Position, revision: bigint): void {
    const key = `${team}:${position.commit}`;
    this.pageEnds.delete(key);
    this.pageEnds.set(key, revision);
    if (this.pageEnds.size > REMEMBERED_PAGE_ENDS) this.pageEnds.delete(this.pageEnds.keys().next().value!);
  }
}

/** Where a resolved event sits in the team's stream: its link's revision (the event's own when read unlinked). */
const linkRevision = (resolved: ResolvedEvent): bigint | null => resolved.link?.revision ?? resolved.event?.revision ?? null;
