import type Database from 'better-sqlite3';
import { conjunctsOf } from './memory-search.js';
import { and, type Filter, type Query, type Scalar, type SortKey } from './port.js';
import { compileWhere, hitsOf, searchOf, trigramable } from './sqlite-query.js';
import { fieldExpr, markerOf, orderTerms, type SearchPlan, type TablePlan } from './sqlite-schema.js';

/**
 * Up to this many search hits, a page is found from the hits (a rowid look-up each, then a
 * sort); beyond, by walking the list's index in order and probing the hits, which stops as soon
 * as the page is full. The cross-over: a page of 50 from a team of 1,000,000 rows with n hits
 * costs about n look-ups one way and 50 * 1,000,000 / n index steps the other.
 */
const DRIVE_BY_HITS = 3_000;
/** Up to this many hits, the total also counts from the hits rather than over the team. */
const COUNT_BY_HITS = 30_000;

export interface SearchedPlan {
  /** Hits of the trigram search, counted from the index alone (-1 for a short search). */
  hits: number;
  /** The total when the hits are exactly the answer (team + text, nothing else), else null. */
  total: number | null;
  /** The table clause to read the rows with: forced onto rowid look-ups when hits are few. */
  from: string;
  /** The same for the count. */
  countFrom: string;
}

type Contains = Extract<Filter, { op: 'contains' }>;

/**
 * Plans a query whose filter holds a search the trigram index serves (a `contains` of three
 * characters or more over a declared field set, alone or in an `or` with id look-ups, as the
 * API's search builds it). Null when there is none: the planner's own choice is then right.
 */
export function planSearched(
  plan: TablePlan,
  query: Pick<Query, 'filter' | 'sort' | 'sums'>,
  prepare: (sql: string) => Database.Statement,
): SearchedPlan | null {
  if (!query.filter) return null;
  const conjuncts = conjunctsOf(query.filter);
  for (const c of conjuncts) {
    const branches = c.op === 'or' ? c.filters : [c];
    const texts = branches.filter((b): b is Contains => b.op === 'contains');
    if (texts.length !== 1) continue;
    const needle = texts[0].text.toLowerCase();
    const search = searchOf(plan, texts[0].fields, needle);
    if (!search || needle === '') continue;
    const ids = branches.filter((b) => b !== texts[0]);
    if (!ids.every((b) => b.op === 'eq' && b.field === plan.def.idField && b.value !== null)) continue;
    const rest = conjuncts.filter((x) => x !== c);
    if (!trigramable(needle)) return shortSearch(plan, search, rest, query.sort ?? []);
    const marker = markerFor(search, rest);
    const hitParams: unknown[] = [];
    const hitsSql = hitsOf(plan, search, needle, marker, hitParams);
    const hits = prepare(`SELECT count(*) FROM (${hitsSql})`).pluck().get(...hitParams) as number;
    // The marker stands for every other conjunct: the hits are the answer, plus any id match.
    const onlyTeam = marker !== null && !query.sums?.length && rest.length === search.where.length && rest.every((x) => x.op === 'eq' && search.where.includes(x.field));
    let total: number | null = null;
    if (onlyTeam) {
      total = hits;
      const restWhere = compileWhere(plan, and(...rest));
      for (const b of ids as Array<{ value: Scalar }>) {
        // An id whose document is of the team but does not hold the text adds itself.
        const sql = `SELECT count(*) FROM ${plan.table} WHERE ${fieldExpr(plan, plan.def.idField)} = ? AND ${restWhere.sql} AND rowid NOT IN (${hitsSql})`;
        total += prepare(sql).pluck().get(b.value, ...restWhere.params, ...hitParams) as number;
      }
    }
    const byHits = `${plan.table} NOT INDEXED`;
    return { hits, total, from: hits <= DRIVE_BY_HITS ? byHits : plan.table, countFrom: hits <= COUNT_BY_HITS ? byHits : plan.table };
  }
  return null;
}

/**
 * A search of one or two characters reads the team's slice of the scan index, which holds the
 * search text, in the list's order: a page stops when full, and the total reads no row. The
 * planner is told so, as it would rather take the smaller index without the text.
 */
function shortSearch(plan: TablePlan, search: SearchPlan, rest: Filter[], sort: SortKey[]): SearchedPlan | null {
  const fixed = search.where.every((f) => rest.some((x) => x.op === 'eq' && x.field === f && x.value !== null));
  const sameOrder = orderTerms(plan, sort).join() === orderTerms(plan, search.sort).join();
  if (!fixed || !sameOrder) return null;
  const from = `${plan.table} INDEXED BY ${search.scanIndex}`;
  return { hits: -1, total: null, from, countFrom: from };
}

/** The marker of the search's `where` values when the query fixes them all by equality. */
function markerFor(search: SearchPlan, rest: Filter[]): string | null {
  if (!search.where.length) return null;
  const values = search.where.map((f) => rest.find((x): x is Extract<Filter, { op: 'eq' }> => x.op === 'eq' && x.field === f)?.value);
  return values.some((v) => v === undefined) ? null : markerOf(values);
}
