import type { Filter, Scalar } from './port.js';
import { fieldExpr, hasMarkerCharacters, type SearchPlan, type TablePlan } from './sqlite-schema.js';

/** A piece of SQL and the values its `?`s take, in order. */
export interface Sql {
  sql: string;
  params: unknown[];
}

/** The SQL function folding text as the memory store does (JS toLowerCase, not SQLite's ASCII lower()). */
export const FOLD_FUNCTION = 'turnout_fold';
export const fold = (v: unknown): string => (v === null || v === undefined ? '' : String(v).toLowerCase());

/** Search text at least this long (in characters) is answered by the trigram index. */
const TRIGRAM = 3;

/** Booleans are stored as 1 and 0 (SQLite has no boolean), so they are compared as such. */
const bindable = (v: Scalar): unknown => (typeof v === 'boolean' ? (v ? 1 : 0) : v);

/**
 * The filter description as a WHERE clause, with the memory store's semantics: a missing field
 * is null, `eq null` matches it, `ne` keeps it, `gte`/`lte` never match it, `contains` is a
 * case-insensitive literal substring (decisions.md 5).
 */
export function compileWhere(plan: TablePlan, filter: Filter | undefined): Sql {
  const params: unknown[] = [];
  const sql = filter ? compile(plan, filter, params) : '1';
  return { sql, params };
}

function compile(plan: TablePlan, f: Filter, params: unknown[]): string {
  switch (f.op) {
    case 'eq': {
      const e = fieldExpr(plan, f.field);
      if (f.value === null) return `${e} IS NULL`;
      if (f.field === plan.def.idField) return idEquals(plan, f.value, params);
      params.push(bindable(f.value));
      return `${e} = ?`;
    }
    case 'ne': {
      const e = fieldExpr(plan, f.field);
      if (f.value === null) return `${e} IS NOT NULL`;
      params.push(bindable(f.value));
      return `${e} IS NOT ?`;
    }
    case 'in': {
      const e = fieldExpr(plan, f.field);
      const values = f.values.filter((v) => v !== null);
      const parts: string[] = [];
      if (values.length && f.field === plan.def.idField) parts.push(...values.map((v) => idEquals(plan, v, params)));
      else if (values.length) {
        params.push(...values.map(bindable));
        parts.push(`${e} IN (${values.map(() => '?').join(', ')})`);
      }
      if (values.length < f.values.length) parts.push(`${e} IS NULL`);
      return parts.length ? `(${parts.join(' OR ')})` : '0';
    }
    case 'gte':
    case 'lte':
      params.push(f.value);
      return `${fieldExpr(plan, f.field)} ${f.op === 'gte' ? '>=' : '<='} ?`;
    case 'and':
      return f.filters.length ? `(${f.filters.map((x) => compile(plan, x, params)).join(' AND ')})` : '1';
    case 'or': {
      if (!f.filters.length) return '0';
      const union = rowidUnion(plan, f.filters, params);
      return union ?? `(${f.filters.map((x) => compile(plan, x, params)).join(' OR ')})`;
    }
    case 'contains':
      return contains(plan, f.fields, f.text, params);
  }
}

/**
 * The id equal to a value, through the key's index (the id has none of its own): a row's key is
 * its id as text, so the key's test only narrows; the column's keeps 1 and '1' apart.
 */
export function idEquals(plan: TablePlan, value: Exclude<Scalar, null>, params: unknown[]): string {
  const e = fieldExpr(plan, plan.def.idField);
  if (typeof value !== 'number' && typeof value !== 'string') {
    params.push(bindable(value));
    return `${e} = ?`;
  }
  params.push(String(value), value);
  return `(_key = ? AND ${e} = ?)`;
}

/**
 * The declared search over these fields, unless the search could meet a row's team marker, or
 * span two fields (a needle holding U+0001: the stored text leaves some fields out, storedSearchText).
 */
export const searchOf = (plan: TablePlan, fields: string[], needle: string): SearchPlan | undefined => {
  if (hasMarkerCharacters(needle) || needle.includes('\u0001')) return undefined;
  const key = fields.join('\u0001');
  return plan.searches.find((s) => s.key === key);
};

/**
 * Whether the trigram index can answer a search: long enough (characters, not UTF-16 units), and
 * free of NUL, which FTS5 reads as the end of its query string ("unterminated string"); such a
 * search takes the row-by-row path, which matches it literally like any other character.
 */
export const trigramable = (text: string): boolean => [...text].length >= TRIGRAM && !text.includes('\u0000');

/** An FTS5 query matching the text as one literal phrase: quotes doubled, nothing else special. */
export const phrase = (text: string): string => `"${text.replace(/"/g, '""')}"`;

/**
 * The rowids of the rows whose search text holds `needle` (and begins with the team `marker`,
 * when one is given), pushing its parameters. The FTS5 table answers for the rows it is up to date
 * on: a phrase of trigrams at consecutive positions over text folded in JS, matched case-
 * sensitively, which is exactly the substring test. The rows changed since its last sync
 * (SearchPlan.pending, few) are tested on their current text instead.
 */
export function hitsOf(plan: TablePlan, search: SearchPlan, needle: string, marker: string | null, params: unknown[]): string {
  const text = `t.${search.column}`;
  params.push((marker ? `^${phrase(marker)} AND ` : '') + phrase(needle), needle);
  if (marker) params.push(marker);
  return (
    `SELECT rowid FROM ${search.fts} WHERE ${search.fts} MATCH ? AND rowid NOT IN (SELECT row FROM ${search.pending}) ` +
    // CROSS JOIN: the few pending rows drive, looked up by rowid. Left to itself (no statistics)
    // the planner scanned the whole table's search-text index instead, 20-30 ms at 100,000 rows.
    `UNION ALL SELECT p.row FROM ${search.pending} p CROSS JOIN ${plan.table} t ON t.rowid = p.row WHERE instr(${text}, ?) > 0` +
    (marker ? ` AND substr(${text}, 1, ${[...marker].length}) = ?` : '')
  );
}

function contains(plan: TablePlan, fields: string[], text: string, params: unknown[]): string {
  if (text === '') return '1';
  if (fields.length === 0) return '0';
  const needle = text.toLowerCase();
  const search = searchOf(plan, fields, needle);
  if (search && trigramable(needle)) return `rowid IN (${hitsOf(plan, search, needle, null, params)})`;
  params.push(needle);
  if (search) return `instr(${search.column}, ?) > 0`;
  // An undeclared field set: folded row by row, as the memory store does (correct, not fast).
  const text_ = fields.map((f) => `${FOLD_FUNCTION}(${fieldExpr(plan, f)})`).join(` || char(1) || `);
  return `instr(${text_}, ?) > 0`;
}

/**
 * An `or` of indexed searches and id look-ups (the API's all-digit search) as one set of rowids:
 * the planner then reads the trigram index and the id index instead of scanning the team.
 */
function rowidUnion(plan: TablePlan, branches: Filter[], params: unknown[]): string | null {
  const parts: string[] = [];
  const values: unknown[] = [];
  for (const b of branches) {
    if (b.op === 'eq' && b.field === plan.def.idField && b.value !== null) {
      parts.push(`SELECT rowid FROM ${plan.table} WHERE ${idEquals(plan, b.value, values)}`);
    } else if (b.op === 'contains' && b.text !== '' && trigramable(b.text.toLowerCase()) && searchOf(plan, b.fields, b.text.toLowerCase())) {
      parts.push(hitsOf(plan, searchOf(plan, b.fields, b.text.toLowerCase())!, b.text.toLowerCase(), null, values));
    } else return null;
  }
  params.push(...values);
  return `rowid IN (${parts.join(' UNION ALL ')})`;
}
