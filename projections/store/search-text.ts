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
  // Loops over two arrays kept across calls (a row's put runs to its end without awaiting): two
  // maps and a closure a field were among a row's most allocated, after its JSON.
  const texts = searchTexts;
  if (texts.length !== fields.length) texts.length = fields.length;
  for (let i = 0; i < fields.length; i++) {
    const v = doc[fields[i]];
    texts[i] = v == null ? '' : String(v).toLowerCase();
  }
  const kept = keptTexts;
  if (kept.length !== texts.length) kept.length = texts.length;
  for (let i = 0; i < texts.length; i++) kept[i] = texts[i] && !heldElsewhere(texts, i, texts[i]) ? texts[i] : '';
  return kept.join('\u0001');
}

const searchTexts: string[] = [];
const keptTexts: string[] = [];

/** Whether another field's text holds `t` whole: a longer one, or an equal one before it (so one of equals is kept). */
function heldElsewhere(texts: string[], i: number, t: string): boolean {
  for (let j = 0; j < texts.length; j++) {
    const u = texts[j];
    if (j !== i && u.length >= t.length && (u.length > t.length || j < i) && u.includes(t)) return true;
  }
  return false;
}

/** The conjuncts of a filter, nested `and`s flattened (routes combine filters built elsewhere). */
export function conjunctsOf(filter: Filter): Filter[] {
  return filter.op === 'and' ? filter.filters.flatMap(conjunctsOf) : [filter];
}
