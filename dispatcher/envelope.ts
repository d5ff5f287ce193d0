import { fromLog } from '../domain/events.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { EventLog } from '../eventlog/port.js';
import { type Mapped, mapEvent } from './catalog.js';
import { AsOf } from './history.js';

/** The webhook envelope (decisions.md §7), as sent and as the change feed shows it (§10). */
export interface Envelope {
  id: string;
  type: Mapped['type'];
  created: number;
  team: number;
  version: number;
  data: Mapped['data'];
}

/**
 * `evt_<log position>_<unix seconds>` (decisions.md 7): the same for every endpoint and attempt.
 * The prepare position is the event's own (on EventStoreDB the events of one append share their
 * commit position).
 */
export const envelopeId = (e: RecordedEvent) => `evt_${e.position.prepare}_${Math.floor(Date.parse(e.metadata.at) / 1000)}`;

/**
 * The envelope of the `index`th webhook a log event fires. The one place it is built: the
 * dispatcher sends it, the change feed and the export list it, so they never differ.
 */
export function envelopeOf(e: RecordedEvent, m: Mapped, _index: number): Envelope {
  return { id: envelopeId(e), type: m.type, created: Math.floor(Date.parse(e.metadata.at) / 1000), team: e.metadata.team, version: Number(e.revision), data: m.data };
}

/** Every envelope a log event fires, in order, with its payloads as of that event. */
export async function envelopesOf(log: EventLog, e: RecordedEvent): Promise<Envelope[]> {
  const mapped = await mapEvent(fromLog(e), new AsOf(log, e.position));
  return mapped.map((m, i) => envelopeOf(e, m, i));
}
