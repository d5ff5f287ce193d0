import type { Document } from 'mongodb';
import type { Doc, Filter } from './port.js';
import { escapeRegExp } from '../../domain/shared/text.js';

/**
 * Substring search served by an index. An unanchored `$regex` reads every document; instead each
 * document carries `_ngrams`: for every searchable field and every position of its lowercased
 * text, `<field>:<the three characters from there>` (padded at the end, so the last positions have
 * one too). A multikey index on `_ngrams` then finds the candidates:
 *  - a search of three or more characters needs `$all` of its trigrams (any document containing
 *    the text contains each of them);
 *  - a search of one or two characters is a prefix of the gram at its position, so an anchored,
 *    case-sensitive `$regex` (`^City:li`) on `_ngrams` reads one range of the index
 *    (https://www.mongodb.com/docs/manual/reference/operator/query/regex/#index-use).
 * The exact, case-insensitive literal match then runs on the candidates only, so the answers are
 * the embedded store's (lowercased text containing the lowercased search).
 */
export const NGRAMS = '_ngrams';
const PAD = '\u0003';

/** The fields n-grammed: those the collection names as searchable, else every string field. */
export function ngramsOf(doc: Doc, searchFields?: string[]): string[] {
  const grams = new Set<string>();
  const fields = searchFields ?? Object.keys(doc).filter((k) => k.charCodeAt(0) !== 95 /* _ */ && typeof doc[k] === 'string');
  for (const f of fields) {
    const v = doc[f];
    if (typeof v !== 'string') continue;
    const text = v.toLowerCase() + PAD + PAD;
    for (let i = 0; i + 2 < text.length; i++) grams.add(`${f}:${text.slice(i, i + 3)}`);
  }
  return [...grams];
}

/** Every regex metacharacter escaped, and NUL spelled out (MongoDB refuses it inside a pattern). */
export function escapeRegex(text: string): string {
  return escapeRegExp(text).replace(/\0/g, '\\x00');
}

/** One field of a `contains`: the index's candidates, then the exact literal match. */
export function containsField(field: string, text: string, searchable: boolean): Document {
  const exact = { [field]: { $regex: escapeRegex(text), $options: 'i' } };
  if (!searchable) return exact;
  const lower = text.toLowerCase();
  if (lower.length < 3) return { $and: [{ [NGRAMS]: { $regex: `^${escapeRegex(`${field}:${lower}`)}` } }, exact] };
  const grams = new Set<string>();
  for (let i = 0; i + 3 <= lower.length; i++) grams.add(`${field}:${lower.slice(i, i + 3)}`);
  return { $and: [{ [NGRAMS]: { $all: [...grams] } }, exact] };
}

export type ContainsFilter = Extract<Filter, { op: 'contains' }>;
