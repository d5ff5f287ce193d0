import type { Position, RecordedEvent } from '../domain/shared/events.js';
import { streamIdOf } from '../domain/events.js';
import { teamEventsUpTo } from '../eventlog/load.js';
import type { EventLog } from '../eventlog/port.js';
import { keyRef, type WriteContext } from './context.js';
import type { CommandDeps } from './deps.js';

export type { KeyedWrite } from './context.js';

/** The key's ref: per API key (the scope) and key, as a batch's (commands/batch.ts batchRef). */
export const idempotencyRef = (scope: string, key: string) => keyRef(scope, key, 'write');

/**
 * The events the earlier try of this write appended to `stream`, taken (a later look finds them
 * no more); undefined when there is no earlier try or it did not reach that stream. One write
 * appends to a stream once, so its events of a stream are one append.
 */
export async function earlierAppend(log: EventLog, ctx: WriteContext, stream: string): Promise<RecordedEvent[] | undefined> {
  const found = await foundOf(log, ctx);
  const events = found?.get(stream);
  if (!events) return undefined;
  found!.delete(stream);
  ctx.idem!.replayed = true;
  return events;
}

/**
 * The id of a record the earlier try created (its stream's first event is among its appends),
 * else a new one: a retry writes to the record it made, and no second record.
 */
export async function newId(deps: CommandDeps, ctx: WriteContext, kind: string, streamOf: (id: number) => string): Promise<number> {
  const earlier = await earlierRecord(deps.log, ctx, streamOf);
  return earlier?.created ? earlier.id : deps.ids.next(kind);
}

/**
 * The record of `streamOf`'s kind the earlier try wrote to, created (its stream's first event is
 * among its appends) or updated; null when it wrote to none.
 */
export async function earlierRecord(log: EventLog, ctx: WriteContext, streamOf: (id: number) => string): Promise<{ id: number; created: boolean } | null> {
  const found = await foundOf(log, ctx);
  if (!found) return null;
  for (const [stream, events] of found) {
    const id = streamIdOf(stream);
    if (Number.isSafeInteger(id) && streamOf(id) === stream) return { id, created: events[0].revision === 0n };
  }
  return null;
}

/**
 * Whether the earlier try of this write appended anything not yet answered from: such a write
 * resumes before checking what it refers to again, since a record referred to may have gone
 * since the earlier try passed its checks, and the write it made stands.
 */
export async function resuming(log: EventLog, ctx: WriteContext): Promise<boolean> {
  const found = await foundOf(log, ctx);
  return !!found && found.size > 0;
}

function foundOf(log: EventLog, ctx: WriteContext): Promise<Map<string, RecordedEvent[]>> | null {
  const idem = ctx.idem;
  if (!idem?.earlier) return null;
  return (idem.found ??= scan(log, ctx.team, idem.earlier.from, idem.earlier.to, idem.ref));
}

/**
 * The team's events after `from`, up to `to`, that carry `ref`, by stream: read so that none
 * appended by then is missed (teamEventsUpTo), and none appended since, by the team's other
 * writers, is taken for the earlier try's.
 */
async function scan(log: EventLog, team: number, from: Position | null, to: Position | null, ref: string): Promise<Map<string, RecordedEvent[]>> {
  const found = new Map<string, RecordedEvent[]>();
  if (to === null) return found; // the log was empty once the key was taken over
  for await (const e of teamEventsUpTo(log, team, from, to, 'a keyed write')) {
    if (e.metadata.idempotencyRef !== ref) continue;
    const events = found.get(e.stream);
    if (events) events.push(e);
    else found.set(e.stream, [e]);
  }
  return found;
}
