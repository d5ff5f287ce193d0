import { ChangeFeed } from '../dispatcher/feed.js';
import { type Cursor, decodeCursor, encodeCursor, type JsonPage, START, typeMatcher } from '../dispatcher/feed-cursor.js';
import { invalidField } from '../domain/shared/errors.js';
import type { Services } from '../runtime/services.js';

const feeds = new WeakMap<Services, ChangeFeed>();

/** The one change feed of an app's services (its long-poll subscription is shared by every reader). */
export function changeFeed(services: Services): ChangeFeed {
  let feed = feeds.get(services);
  if (!feed) feeds.set(services, (feed = new ChangeFeed(services.log, services.feedTable ?? services.feedModel ?? null)));
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
  if (!(await feed.reached(after)))
    throw invalidField('after', 'after names a place past the end of the log: a cursor from another installation, or from before this data was restored from a backup. Read again from the start (no after) or from "now".');
  const page: JsonPage = await feed.wait(team, { after, types, limit: q.limit ?? 100 }, (q.wait ?? 0) * 1000);
  return `{"changes":[${page.changes.join(',')}],"next":${JSON.stringify(encodeCursor(page.next))},"hasMore":${page.hasMore}}`;
}
