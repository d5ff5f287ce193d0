import { comparePositions, type Evolver, type Position, type RecordedEvent } from '../domain/shared/events.js';
import { currentRevision } from '../domain/shared/revision.js';
import type { EventLog } from './port.js';

export interface Loaded<S> {
  state: S;
  /** Revision of the last event, or null when the stream does not exist. */
  revision: bigint | null;
  events: RecordedEvent[];
}

/** Reads a stream and folds it through the aggregate's evolver. */
export async function load<S>(log: EventLog, stream: string, evolver: Evolver<S>): Promise<Loaded<S>> {
  const events = await log.readStream(stream);
  let state = evolver.initial();
  for (const e of events) state = evolver.evolve(state, e);
  return { state, revision: events.length ? events[events.length - 1].revision : null, events };
}

/** A stream's last event, or undefined when it does not exist: read from the end where the log can. */
export async function lastEvent(log: EventLog, stream: string): Promise<RecordedEvent | undefined> {
  if (log.readStreamBackwards) return (await log.readStreamBackwards(stream, 1))[0];
  return (await log.readStream(stream)).at(-1);
}

/** A stream's record revision now: off its last event's stamp (one event read where the log can). */
export async function revisionOfStream(log: EventLog, stream: string): Promise<number> {
  const last = await lastEvent(log, stream);
  if (!last) return 0;
  return typeof last.metadata.revision === 'number' ? last.metadata.revision : currentRevision(await log.readStream(stream));
}

const SCAN_PAGE = 1000;

/**
 * The team's events after `from` (null: from the start) up to `to`, a page at a time, complete as
 * the log stood at `to`: read from the log itself where its team read trails the appends
 * (EventLog.readTeamUpTo), else through readTeam. `what` names the scan in the error of a log
 * that can read neither.
 */
export async function* teamEventsUpTo(log: EventLog, team: number, from: Position | null, to: Position, what: string): AsyncGenerator<RecordedEvent> {
  const { readTeamUpTo, readTeam } = log;
  const read = readTeamUpTo
    ? (after: Position | null) => readTeamUpTo.call(log, team, after, to, SCAN_PAGE)
    : readTeam
      ? (after: Position | null) => readTeam.call(log, team, after, SCAN_PAGE)
      : null;
  if (!read) throw new Error(`this event log cannot read a team's events, so ${what} cannot be resumed`);
  for (let after = from; ; ) {
    const page = await read(after);
    for (const e of page) {
      // Appended after `to`: past what the scan is for.
      if (comparePositions(e.position, to) > 0) return;
      yield e;
    }
    if (page.length < SCAN_PAGE) return;
    after = page[page.length - 1].position;
  }
}
