import { invalidField } from '../domain/shared/errors.js';
import type { Position } from '../domain/shared/events.js';
import { ALL_TYPES, isWebhookType, WEBHOOK_TYPES } from '../domain/webhook-endpoint/types.js';

/**
 * Where a change-feed reader stands: the log position of the last change it was given and how
 * many of that change's envelopes it has had (a task person-event fires two, and a page may end
 * between them). `position` null: before the first change. The cursor holds only log positions,
 * which never change, so it stays valid across restarts and read-model rebuilds.
 */
export interface Cursor {
  position: Position | null;
  /** Envelopes of the change at `position` already given; ALL once it is behind the reader. */
  seen: number;
}

/** Every envelope of a change (decisions.md §7 numbers a change's types below 10). */
export const ALL = 10;

export const START: Cursor = { position: null, seen: ALL };

/** A page of the feed, each envelope as its JSON text: written out as it is (the API, the export). */
export interface JsonPage {
  changes: string[];
  next: Cursor;
  hasMore: boolean;
}

export interface FeedQuery {
  after: Cursor;
  /** Which envelope types to give (null: all). */
  types: ((type: string) => boolean) | null;
  limit: number;
  /** Stop after this cursor (inclusive): an export's `to`. */
  until?: Cursor | null;
  /** Only changes written in this span (unix ms, both inclusive): an export's date-times. */
  at?: { from: number; to: number };
}

const FORMAT = /^c1\.(\d{1,20})\.(\d{1,20})\.(\d{1,2})$/;
/** The highest position a cursor may name: the feed numbers envelopes position * 10 + index in a signed 64-bit integer. */
const MAX_POSITION = (2n ** 63n - 1n) / 10n - 1n;

export function encodeCursor(c: Cursor): string {
  const p = c.position ?? { commit: 0n, prepare: 0n };
  return Buffer.from(`c1.${p.commit}.${p.prepare}.${c.seen}`).toString('base64url');
}

/**
 * A cursor from a previous `next` (or a replay's `from`/`to`); anything else is invalid_field
 * naming `field`, saying what it accepts: `what` when the parameter also takes something else
 * (a date-time).
 */
export function decodeCursor(text: string, field: string, what = `a cursor from a previous answer's "next"${field === 'after' ? ', or "now"' : ''}`): Cursor {
  const bad = () => invalidField(field, `${field} must be ${what}.`);
  if (!/^[A-Za-z0-9_-]{1,80}$/.test(text)) throw bad();
  const m = FORMAT.exec(Buffer.from(text, 'base64url').toString('latin1'));
  if (!m) throw bad();
  const [commit, prepare, seen] = [BigInt(m[1]), BigInt(m[2]), Number(m[3])];
  // No log gives such a position: a prepare after its commit, or past what a change's envelope
  // number (position * 10 + its index, feed-table.ts) can hold in SQLite's 64-bit integer.
  if (seen > ALL || prepare > commit || commit > MAX_POSITION) throw bad();
  return { position: commit === 0n && prepare === 0n ? null : { commit, prepare }, seen };
}

/** `types` (a comma list of catalog names or `<resource>.*` prefixes) as a matcher; unknown names are invalid_field. */
export function typeMatcher(list: string | readonly string[] | undefined, field = 'types'): ((type: string) => boolean) | null {
  if (list === undefined) return null;
  const items = (typeof list === 'string' ? list.split(',') : list).map((t) => t.trim());
  const names = new Set<string>();
  const prefixes: string[] = [];
  for (const t of items) {
    if (t === ALL_TYPES) return null;
    if (t.endsWith('.*') && WEBHOOK_TYPES.some((w) => w.startsWith(t.slice(0, -1)))) prefixes.push(t.slice(0, -1));
    else if (isWebhookType(t)) names.add(t);
    else throw invalidField(field, `"${t}" is not a webhook event type or a prefix such as "constituent.*"; GET /api/v1/webhook-event-types lists them.`);
  }
  return (type) => names.has(type) || prefixes.some((p) => type.startsWith(p));
}
