import type Database from 'better-sqlite3';
import type { Position, RecordedEvent } from '../domain/shared/events.js';
import type { EventLog } from '../eventlog/port.js';
import { envelopesIn, seqOfEnvelopeId } from './envelope.js';
import type { StreamReader } from './history.js';

/**
 * What the dispatcher's stores do for an erasure (decisions.md §17): every stored envelope that
 * carries an erased person's value (the change feed's table, queued deliveries) is built again
 * from the log as the erasure left it, so it keeps its id and shape with those fields null.
 */

/** Whether a stored JSON text holds one of the values (as JSON writes them, quotes aside). */
export function mentionsAny(values: readonly string[]): (text: string) => boolean {
  const needles = values.map((v) => JSON.stringify(v).slice(1, -1));
  return (text) => needles.some((n) => text.includes(n));
}

/** Envelope number `seq` of a team (decisions.md §7: position times 10 plus the type's index), as the log now makes it; null when it fires no longer. */
export type EnvelopeRebuild = (seq: bigint) => Promise<string | null>;

/**
 * `linkWaitMs`: how long a team read that ends before an envelope's event is waited for. The
 * event is in the log (the envelope was made of it, and the log keeps every event), so such a
 * read trails the append (EventStoreDB's links, a moment behind it): the envelope is not taken to
 * fire no longer, which would remove it, but read again; past the wait the erasure's step fails,
 * to be run again, having removed nothing.
 */
export function envelopeRebuilder(log: Pick<EventLog, 'readTeam' | 'readStream' | 'readStreamUntil'>, team: number, linkWaitMs = 30_000): EnvelopeRebuild {
  return envelopeRebuilderAt(async (position) => {
    const at = { commit: position, prepare: position };
    for (let waited = 0; ; waited += LINK_POLL_MS) {
      const e = await teamEventAt(log, team, at);
      if (e || !log.readTeam) return e;
      if (waited >= linkWaitMs) throw new Error(`team ${team}'s events are not readable up to log position ${position} yet: the erasure's rewrite of its change feed stops, to be run again`);
      await new Promise((resolve) => setTimeout(resolve, LINK_POLL_MS));
    }
  }, log);
}

const LINK_POLL_MS = 50;
/** Events read a page, and pages at most, from an envelope's position to find its own event (teamEventAt). */
const AROUND = 20;
const PAGES = 5;

/**
 * The team's event whose prepare position is `at`'s. Its commit position is at or after it (equal
 * when embedded), so a read from there may meet events committed between first: it is looked for
 * among the next pages, as a resend's body is (operations.ts bodyOf), and never answered by
 * another event, which would make its envelope look as if it fired no longer (removed, dropped).
 * Undefined where the read does not reach it yet.
 */
export async function teamEventAt(log: Pick<EventLog, 'readTeam'>, team: number, at: Position): Promise<RecordedEvent | undefined> {
  if (!log.readTeam) return undefined;
  let from = at;
  for (let page = 0, inclusive = true; page < PAGES; page++, inclusive = false) {
    const read = await log.readTeam(team, from, AROUND, inclusive);
    const e = read.find((x) => x.position.prepare === at.prepare);
    if (e || read.length < AROUND) return e;
    from = read[read.length - 1].position;
  }
  return undefined;
}

/** The same from any reader of the log: `eventAt` answers the team's event at a position (or any later one, or none). */
export function envelopeRebuilderAt(eventAt: (position: bigint) => Promise<RecordedEvent | undefined>, streams: StreamReader): EnvelopeRebuild {
  return async (seq) => {
    const position = seq / 10n;
    const e = await eventAt(position);
    if (!e || e.position.prepare !== position) return null;
    const envelope = (await envelopesIn(streams, e))[Number(seq % 10n)];
    return envelope ? JSON.stringify(envelope) : null;
  };
}

/**
 * The envelopes an erasure must build again: those of the person's own events (by position, the
 * envelope number over 10) and any whose text holds one of its values (a linked record's copy).
 * Given its type, a constituent's envelope (`constituent.*`) is picked by position alone: its data
 * is that constituent's own record (dispatcher/catalog.ts, payloads.ts constituentData), never
 * a copy of another's, and at a million records nearly every envelope is one, most of those
 * holding some common value of the person (a city, a state) that only a rebuild would show unchanged.
 */
export function staleEnvelope(values: readonly string[], positions: Iterable<bigint>): (seq: bigint, json: string, type?: string) => boolean {
  const mentions = mentionsAny(values);
  // Every envelope number the positions can give (at most 10 types an event): a look-up, not a
  // BigInt division for each of a million envelopes (0.8 s of the scan at 1M).
  const seqs = new Set<bigint>();
  for (const p of positions) for (let i = 0n; i < 10n; i++) seqs.add(p * 10n + i);
  return (seq, json, type) => seqs.has(seq) || (!type?.startsWith('constituent.') && mentions(json));
}

/** Queued deliveries read per turn of the event loop: a queue held back by a failing endpoint can hold a day of them. */
const QUEUE_PAGE = 200;

/**
 * Queued deliveries of the team (webhooks.sqlite) whose body holds an erased value: rebuilt, or
 * dropped when the envelope can no longer be built. A page at a time, each written in its own
 * transaction with a turn of the event loop between, so that requests go on meanwhile; a task
 * delivered meanwhile is simply no longer there to write, and one queued meanwhile was built from
 * the rewritten log. Answers how many were touched.
 */
export async function purgeQueuedBodies(
  db: Database.Database,
  team: number,
  stale: (text: string) => boolean,
  rebuild: EnvelopeRebuild,
  page = QUEUE_PAGE,
): Promise<number> {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'webhook_tasks'").get();
  if (!exists) return 0;
  const next = db.prepare<[number, string, number], { id: string; event_id: string; body: string }>('SELECT id, event_id, body FROM webhook_tasks WHERE team = ? AND id > ? ORDER BY id LIMIT ?');
  const update = db.prepare('UPDATE webhook_tasks SET body = ? WHERE id = ?');
  const drop = db.prepare('DELETE FROM webhook_tasks WHERE id = ?');
  let touched = 0;
  for (let after = ''; ; ) {
    const rows = next.all(team, after, page);
    const changes: Array<{ id: string; body: string | null }> = [];
    for (const r of rows) {
      // A resent test ping is no log event's envelope and holds no record's values: left as it is.
      const seq = seqOfEnvelopeId(r.event_id);
      if (seq === null || !stale(r.body)) continue;
      changes.push({ id: r.id, body: await rebuild(seq) });
    }
    db.transaction(() => {
      for (const c of changes) {
        if (c.body) update.run(c.body, c.id);
        else drop.run(c.id);
      }
    })();
    touched += changes.length;
    if (rows.length < page) return touched;
    after = rows[rows.length - 1].id;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
