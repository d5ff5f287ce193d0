import { invalidField } from '../domain/shared/errors.js';
import { parseInstant } from '../domain/shared/values.js';
import { type Cursor, decodeCursor, type FeedQuery, START, typeMatcher } from './feed-cursor.js';

/** A range bound of an export or a replay (decisions.md §12): a date-time, or a cursor. */
export type Bound = { at: number } | { cursor: Cursor };

const BOUND = 'a date-time such as 2026-03-01T00:00:00Z, or a cursor from a previous answer\'s "next"';

export function parseBound(text: string, field: string): Bound {
  if (/^\d{4}-/.test(text)) {
    const at = parseInstant(text);
    if (at === null) throw invalidField(field, `${field} must be ${BOUND}.`);
    return { at };
  }
  return { cursor: decodeCursor(text, field, BOUND) };
}

/** Whether `to` comes before `from`, where the two can be compared (both date-times, or both cursors). */
function reversed(from: Bound, to: Bound): boolean {
  if ('at' in from && 'at' in to) return to.at < from.at;
  if ('cursor' in from && 'cursor' in to) {
    const [a, b] = [from.cursor.position?.commit ?? -1n, to.cursor.position?.commit ?? -1n];
    return b < a || (a === b && to.cursor.seen < from.cursor.seen);
  }
  return false;
}

/** The feed query of a range: `from` exclusive as a cursor, both inclusive as date-times. */
export function rangeQuery(from: Bound | undefined, to: Bound | undefined, types: string | readonly string[] | undefined): Omit<FeedQuery, 'limit'> {
  if (from && to && reversed(from, to)) throw invalidField('to', 'to must not come before from: a range runs from its start to its end.');
  const after = from && 'cursor' in from ? from.cursor : START;
  const until = to && 'cursor' in to ? to.cursor : null;
  const at = from && 'at' in from ? from.at : -Infinity;
  const upTo = to && 'at' in to ? to.at : Infinity;
  return { after, until, types: typeMatcher(types), at: at === -Infinity && upTo === Infinity ? undefined : { from: at, to: upTo } };
}
