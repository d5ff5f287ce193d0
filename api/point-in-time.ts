import type { HistoryResource } from '../domain/resources.js';
import { invalidField } from '../domain/shared/errors.js';
import type { Values } from '../domain/shared/fields.js';
import { parseInstant } from '../domain/shared/values.js';
import { historyKind } from '../projections/history/kinds.js';
import { type Point, recordAsOf, recordHistory } from '../projections/history/read.js';
import type { Services } from '../runtime/services.js';

/**
 * `?asOf=` or `?revision=` on a single read (decisions.md §10): the record as it stood, with its
 * revision; null when neither was sent (the ordinary read).
 */
export const isPointRead = (q: { asOf?: string; revision?: number }): boolean => q.asOf !== undefined || q.revision !== undefined;

export async function pointRead(services: Services, resource: HistoryResource, team: number, id: number, q: { asOf?: string; revision?: number }): Promise<Values | null> {
  if (q.asOf === undefined && q.revision === undefined) return null;
  if (q.asOf !== undefined && q.revision !== undefined) throw invalidField('revision', 'Send asOf or revision, not both.');
  let point: Point;
  if (q.asOf !== undefined) {
    const at = parseInstant(q.asOf);
    if (at === null) throw invalidField('asOf', 'asOf must be a date-time such as 2026-03-01T12:00:00Z.');
    point = { at };
  } else point = { revision: q.revision! };
  const kind = historyKind(resource);
  const { doc, revision, erased } = await recordAsOf(services.log, services.store, kind, team, id, point);
  return erased ? { [kind.key]: doc, revision, erased } : { [kind.key]: doc, revision };
}

/** GET /{resource}/{id}/history, paged as lists. */
export async function historyPage(services: Services, resource: HistoryResource, team: number, id: number, page: { page: number; pageSize: number }) {
  const all = await recordHistory(services.log, historyKind(resource), team, id);
  const start = (page.page - 1) * page.pageSize;
  return { history: all.slice(start, start + page.pageSize), ...page, total: all.length };
}

