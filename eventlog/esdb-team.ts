import { ErrorType, type EventStoreDBClient, type ResolvedEvent } from '@eventstore/db-client';
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

export const TEAM_PROJECTION_QUERY = `fromAll().when({
  $any: function (s, e) {
    if (e.eventType.charAt(0) === '$' || !e.isJson) return;
    var m = e.metadata;
    if (typeof m === 'string') { try { m = JSON.parse(m); } catch (err) { return; } }
    if (m && m.team) linkTo('turnout_team-' + m.team, e);
  }
});`;

type Client = Pick<EventStoreDBClient, 'readStream' | 'createProjection'>;

export class EsdbTeamReader {
  private ensured: Promise<void> | null = null;

  constructor(
    private readonly client: Client,
    private readonly toRecorded: (resolved: ResolvedEvent) => RecordedEvent | null,
  ) {}

  /** Creates the projection once per process; an existing one is kept as it is. */
  private ensure(): Promise<void> {
    return (this.ensured ??= this.client.createProjection(TEAM_PROJECTION, TEAM_PROJECTION_QUERY, { emitEnabled: true, trackEmittedStreams: false }).catch((err: unknown) => {
      if (/exist|conflict/i.test(String((err as Error)?.message ?? err))) return;
      this.ensured = null;
      throw err;
    }));
  }

  async read(team: number, from: Position | null, limit: number, inclusive = false): Promise<RecordedEvent[]> {
    await this.ensure();
    const out: RecordedEvent[] = [];
    const read = this.client.readStream(teamStream(team), { resolveLinkTos: true });
    try {
      for await (const resolved of read) {
        const e = this.toRecorded(resolved);
        if (!e || (e.metadata as EventMetadata).team !== team) continue;
        if (from) {
          const c = comparePositions(e.position, from);
          if (c < 0 || (c === 0 && !inclusive)) continue;
        }
        out.push(e);
        if (out.length >= limit) break;
      }
    } catch (err) {
      if ((err as { type?: unknown })?.type === ErrorType.STREAM_NOT_FOUND) return [];
      throw err;
    } finally {
      await read.cancel().catch(() => undefined);
    }
    return out;
  }
}
