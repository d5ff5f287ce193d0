import { invalidField } from '../domain/shared/errors.js';
import { parseInstant } from '../domain/shared/values.js';
import { ChangeFeed } from '../dispatcher/feed.js';
import { type Cursor, decodeCursor, encodeCursor, type FeedQuery, type JsonPage, START, typeMatcher } from '../dispatcher/feed-cursor.js';
import type { Services } from '../runtime/services.js';

const feeds = new WeakMap<Services, ChangeFeed>();

/** The one change feed of an app's services (its long-poll subscription is shared by every reader). */
export function changeFeed(services: Services): ChangeFeed {
  let feed = feeds.get(services);
  if (!feed) feeds.set(services, (feed = new ChangeFeed(services.log, services.feedTable ?? null)));
  return feed;
}

export async function closeChangeFeed(services: Services): Promise<void> {
  await feeds.get(services)?.close();
  feeds.delete(services);
}

export interface ChangesParams {
  after?: string;
  types?: string;
  limit?: number;
  wait?: number;
}

/**
 * GET .../changes (decisions.md §10), for /api/v1 and the admin surface alike: the answer's JSON
 * text, each envelope written as it is (route: reply.type('application/json').send(text)).
 */
export async function readChanges(services: Services, team: number, q: ChangesParams): Promise<string> {
  const feed = changeFeed(services);
  const types = typeMatcher(q.types);
  const after: Cursor = q.after === undefined ? START : q.after === 'now' ? await feed.now() : decodeCursor(q.after, 'after');
  const page: JsonPage = await feed.wait(team, { after, types, limit: q.limit ?? 100 }, (q.wait ?? 0) * 1000);
  return `{"changes":[${page.changes.join(',')}],"next":${JSON.stringify(encodeCursor(page.next))},"hasMore":${page.hasMore}}`;
}

/** A range bound of an export or a replay (decisions.md §12): a date-time, or a cursor. */
export type Bound = { at: number } | { cursor: Cursor };

export function parseBound(text: string, field: string): Bound {
  if (/^\d{4}-/.test(text)) {
    const at = parseInstant(text);
    if (at === null) throw invalidField(field, `${field} must be a date-time such as 2026-03-01T00:00:00Z, or a cursor.`);
    return { at };
  }
  return { cursor: decodeCursor(text, field) };
}

/** The feed query of a range: `from` exclusive as a cursor, both inclusive as date-times. */
export function rangeQuery(from: Bound | undefined, to: Bound | undefined, types: string | undefined): Omit<FeedQuery, 'limit'> {
  const after = from && 'cursor' in from ? from.cursor : START;
  const until = to && 'cursor' in to ? to.cursor : null;
  const at = from && 'at' in from ? from.at : -Infinity;
  const upTo = to && 'at' in to ? to.at : Infinity;
  return { after, until, types: typeMatcher(types), at: at === -Infinity && upTo === Infinity ? undefined : { from: at, to: upTo } };
}
