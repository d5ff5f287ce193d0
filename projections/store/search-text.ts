import type { Doc, Filter } from './port.js';

/** Lower-cased search text of a document over some fields, as `contains` compares it. */
export const searchTextOf = (doc: Doc, fields: string[]): string =>
  fields.map((f) => (doc[f] == null ? '' : String(doc[f]).toLowerCase())).join('\u0001');

/**
 * The search text as a store keeps it for its index: searchTextOf with each field's text left
 * out (empty) when another field's text holds it whole (a name inside the full name). Every
 * needle without U+0001 that the full text holds lies inside one field's text, so inside the one
 * holding it: the same rows match, and each row holds the same one- and two-character strings
 * (sqlite-grams.ts counts rows, not occurrences). A needle holding U+0001 can span fields, so
 * its search reads the fields themselves (sqlite-query.ts searchOf).
 */
export function storedSearchText(doc: Doc, fields: string[]): string {
  const texts = fields.map((f) => (doc[f] == null ? '' : String(doc[f]).toLowerCase()));
  return texts.map((t, i) => (t && texts.some((u, j) => j !== i && u.length >= t.length && (u.length > t.length || j < i) && u.includes(t)) ? '' : t)).join('\u0001');
}

/** The conjuncts of a filter, nested `and`s flattened (routes combine filters built elsewhere). */
export function conjunctsOf(filter: Filter): Filter[] {
  return filter.op === 'and' ? filter.filters.flatMap(conjunctsOf) : [filter];
}
