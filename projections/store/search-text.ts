import type { Doc, Filter } from './port.js';

/** Lower-cased search text of a document over some fields, as `contains` compares it. */
export const searchTextOf = (doc: Doc, fields: string[]): string =>
  fields.map((f) => (doc[f] == null ? '' : String(doc[f]).toLowerCase())).join('\u0001');

/** The conjuncts of a filter, nested `and`s flattened (routes combine filters built elsewhere). */
export function conjunctsOf(filter: Filter): Filter[] {
  return filter.op === 'and' ? filter.filters.flatMap(conjunctsOf) : [filter];
}
