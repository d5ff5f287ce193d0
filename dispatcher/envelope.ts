import { randomBytes } from 'node:crypto';
import { isErasedEvent } from '../domain/constituent/events.js';
import { fromLog, type LoggedEvent } from '../domain/events.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { Values } from '../domain/shared/fields.js';
import type { WebhookType } from '../domain/webhook-endpoint/types.js';
import { revisionAfter } from '../domain/shared/revision.js';
import { mapEvent } from './catalog.js';
import { AsOf, type StreamReader } from './history.js';

/** What a webhook delivers and the change feed lists, byte for byte the same (decisions.md §7, §10). */
export interface Envelope {
  id: string;
  type: WebhookType;
  /** Unix seconds of the change. */
  created: number;
  team: number;
  /** The record's revision after the change (domain/shared/revision.ts). */
  version: number;
  data: Values;
  /** decisions.md §17: on every change of an erased constituent, whose personal fields read null. */
  erased?: true;
}

/**
 * The rules that make a log event's envelopes (which types it fires, their ids, their data):
 * raised when they change, so that both stores of the change feed (the embedded table,
 * feed-table.ts, and the read store's collection, feed-model.ts), whose versions add it, are
 * built again with the envelopes a ["*"] endpoint now receives for past changes too (decisions.md §10).
 * 1: a task person-event's volunteer_task.updated numbered by the person-event (index 1), after
 * it; one volunteer.updated a write (decisions.md §7).
 */
export const ENVELOPE_RULES = 1;

const secondsOf = (e: RecordedEvent) => Math.floor(Date.parse(e.metadata.at) / 1000);

/**
 * `evt_<number>_<unix seconds>` (decisions.md §7): the number is the event's log position (its
 * prepare position: on EventStoreDB the events of one append share their commit position) times
 * 10, plus the index of the type among the types the event fires, so no two envelopes share an
 * id. The same for every endpoint, every attempt and the change feed.
 */
const idAt = (e: RecordedEvent, index: number, seconds: number) => `evt_${e.position.prepare * 10n + BigInt(index)}_${seconds}`;
export const envelopeId = (e: RecordedEvent, index = 0) => idAt(e, index, secondsOf(e));

/**
 * A test ping's numbers (decisions.md §12) start here: a log position is 64-bit (below 2^64, about
 * 1.8e19, even read unsigned), so a log event's envelope number stays below 1.9e20 and never
 * reaches them.
 */
const PING_NUMBERS_FROM = 10n ** 21n;

/** A new test ping's id, of the same form as every envelope's: 72 random bits above any log event's number. */
export const pingEnvelopeId = (seconds: number) => `evt_${PING_NUMBERS_FROM + BigInt('0x' + randomBytes(9).toString('hex'))}_${seconds}`;

/** The number of an envelope id `evt_<number>_<unix seconds>`; null for anything else. */
const numberOf = (id: string): bigint | null => {
  const m = /^evt_(\d+)_\d+$/.exec(id);
  return m ? BigInt(m[1]) : null;
};

/** Whether an envelope id is a test ping's (its body is built from the id alone, not from the log). */
export const isPingEnvelopeId = (id: string): boolean => {
  const n = numberOf(id);
  return n !== null && n >= PING_NUMBERS_FROM;
};

/** The envelope number of a log event's id (its position times 10 plus its type's index); null for a test ping's, built of no log event. */
export const seqOfEnvelopeId = (id: string): bigint | null => {
  const n = numberOf(id);
  return n !== null && n < PING_NUMBERS_FROM ? n : null;
};

/**
 * Every envelope one log event fires, in the order of its types (that order gives the ids), with
 * the payloads as of the event. Webhook endpoints get those they subscribe to; the change feed
 * lists them all.
 */
export async function envelopesOf(e: LoggedEvent, h: AsOf): Promise<Envelope[]> {
  const mapped = await mapEvent(e, h);
  if (!mapped.length) return [];
  // An unstamped first event is revision 1 (revisionsOf) without reading its stream.
  const stamped = typeof e.metadata.revision === 'number' ? e.metadata.revision : e.revision === 0n ? 1 : null;
  const version = stamped ?? revisionAfter(e, await h.streamOf(e));
  const created = secondsOf(e);
  const erased = isErasedEvent(e);
  const out: Envelope[] = mapped.map((m, i) =>
    erased ? { id: idAt(e, i, created), type: m.type, created, team: e.metadata.team, version, data: m.data, erased } : { id: idAt(e, i, created), type: m.type, created, team: e.metadata.team, version, data: m.data },
  );
  if (check) for (const envelope of out) await check(envelope);
  return out;
}

/** Throws (or rejects) when an envelope's data does not match its type's schema. */
export type EnvelopeCheck = (envelope: Envelope) => void | Promise<void>;

let check: EnvelopeCheck | null = null;

/**
 * Checks every envelope built from now on against the catalog's schemas. The test suite installs
 * one (tests/support/payload-check.ts), so a test that produces a payload its type's published
 * schema does not describe fails; the service itself installs none and pays nothing.
 */
export function checkEnvelopesWith(next: EnvelopeCheck | null): void {
  check = next;
}

/** Puts an envelope built elsewhere (a test ping) through the same check. */
export async function checkEnvelope(envelope: Envelope): Promise<void> {
  if (check) await check(envelope);
}

/** Every envelope of a log event, with its payloads read from the log as of it (the change feed, the export). */
export const envelopesIn = (log: StreamReader, e: RecordedEvent): Promise<Envelope[]> => envelopesOf(fromLog(e), new AsOf(log, e.position));
