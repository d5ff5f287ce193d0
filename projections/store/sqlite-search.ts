import type Database from 'better-sqlite3';
import { conjunctsOf } from './search-text.js';
import { and, type Filter, type Query } from './port.js';
import { isGrammable } from './sqlite-grams.js';
import { compileWhere, idEquals, phrase, searchOf, trigramable } from './sqlite-query.js';
import { fieldExpr, markerOf, orderTerms, type SearchPlan, type TablePlan } from './sqlite-schema.js';

/**
 * When the team's search-text index is not walked (walkFor): up to this many search hits, a page
 * is found from the hits (a rowid look-up each, then a sort); beyond, by walking the list's index
 * in order and probing the gathered hits, which stops as soon as the page is full. The cross-over: a page of 50 from a team of 1,000,000 rows with n hits
 * costs about n look-ups one way and 50 * 1,000,000 / n index steps the other.
 */
const DRIVE_BY_HITS = 3_000;
/** Up to this many hits, the total also counts from the hits rather than over the team. */
const COUNT_BY_HITS = 30_000;
/**
 * Rows outside the team up to this many are read (about 0.2 µs each) to take their matches off
 * the search's count over every row, which then needs no team marker: intersecting with the
 * marker reads the team's whole doclist (24 ms for a team of 1,000,000, 5 ms for the term alone).
 */
const OTHER_ROWS = 10_000;
/**
 * A page walk of the team's search-text index stops after this many rows per hit: a row walked
 * costs about 0.15 µs, a hit about 1 µs whichever way the hits find the page.
 */
const WALK_PER_HIT = 8;
/** The walk's bound allows this many times the rows expected if the hits are spread evenly. */
const WALK_SLACK = 4;

export interface SearchedPlan {
  /** Hits of the trigram search, counted from the index alone (-1 for a short search). */
  hits: number;
  /** The total when the hits are exactly the answer (team + text, nothing else), else null. */
  total: number | null;
  /** The table clause to read the rows with: forced onto rowid look-ups when hits are few. */
  from: string;
  /** The same for the count. */
  countFrom: string;
  /** The page's rowids found by walking the team's list (see walkFor), or null when the walk gave up. */
  walk?: () => number[] | null;
}

type Contains = Extract<Filter, { op: 'contains' }>;
type Eq = Extract<Filter, { op: 'eq' }>;

/**
 * Plans a query whose filter holds a search the trigram index serves (a `contains` of three
 * characters or more over a declared field set, alone or in an `or` with id look-ups, as the
 * API's search builds it). Null when there is none: the planner's own choice is then right.
 */
export function planSearched(
  plan: TablePlan,
  query: Pick<Query, 'filter' | 'sort' | 'sums' | 'page'>,
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
    if (!trigramable(needle)) return shortSearch(plan, search, { sort: query.sort, sums: query.sums, rest, ids: ids as Eq[], needle }, prepare);
    // Only the team is fixed besides the search: the team's hits are the answer, plus any id match.
    const teamOnly = onlyTeamFixed(search, rest, query.sums);
    const others = teamOnly ? othersMatching(plan, search, rest as Eq[], needle, prepare) : null;
    const marker = markerFor(search, rest);
    let hits: number;
    if (others !== null) hits = countHits(plan, search, needle, null, prepare) - others;
    else hits = countHits(plan, search, needle, marker, prepare);
    let total: number | null = null;
    if (teamOnly && (others !== null || marker !== null)) total = hits + idsBeyond(plan, search, rest, ids as Eq[], needle, prepare);
    const byHits = `${plan.table} NOT INDEXED`;
    const walk = total === null ? undefined : walkFor(plan, search, { ...query, rest, ids: ids as Eq[], needle, hits, total }, prepare);
    return { hits, total, from: hits <= DRIVE_BY_HITS ? byHits : plan.table, countFrom: hits <= COUNT_BY_HITS ? byHits : plan.table, walk };
  }
  return null;
}

/**
 * Rows whose search text holds the needle (and begins with the marker, when given), counted from
 * the trigram index alone, then corrected for the rows waiting for its sync: the index counts
 * each of those by the text it still holds (`old`), the answer by its text now.
 */
function countHits(plan: TablePlan, search: SearchPlan, needle: string, marker: string | null, prepare: (sql: string) => Database.Statement): number {
  const indexed = prepare(`SELECT count(*) FROM ${search.fts} WHERE ${search.fts} MATCH ?`)
    .pluck()
    .get((marker ? `^${phrase(marker)} AND ` : '') + phrase(needle)) as number;
  return indexed + pendingChange(plan, search, needle, marker, prepare);
}

/** Ids the search also matches (the API's all-digit search) whose document is of the team but does not hold the text: each adds itself. */
function idsBeyond(plan: TablePlan, search: SearchPlan, rest: Filter[], ids: Eq[], needle: string, prepare: (sql: string) => Database.Statement): number {
  let more = 0;
  const restWhere = compileWhere(plan, and(...rest));
  for (const b of ids) {
    const params: unknown[] = [];
    const sql = `SELECT count(*) FROM ${plan.table} WHERE ${idEquals(plan, b.value!, params)} AND ${restWhere.sql} AND instr(${search.column}, ?) = 0`;
    more += prepare(sql).pluck().get(...params, ...restWhere.params, needle) as number;
  }
  return more;
}

/**
 * What the rows waiting for the sync change in a count of the rows holding the needle (and
 * beginning with the marker, when given) that the search tables give: the tables count each of
 * them by the text they still hold (`old`), the answer by its text now.
 */
function pendingChange(plan: TablePlan, search: SearchPlan, needle: string, marker: string | null, prepare: (sql: string) => Database.Statement): number {
  const holds = (text: string) => `(instr(${text}, ?) > 0${marker ? ` AND substr(${text}, 1, ${[...marker].length}) = ?` : ''})`;
  const args = marker ? [needle, marker] : [needle];
  const [was, now] = prepare(
    `SELECT count(CASE WHEN ${holds('p.old')} THEN 1 END), count(CASE WHEN ${holds(`t.${search.column}`)} THEN 1 END) FROM ${search.pending} p LEFT JOIN ${plan.table} t ON t.rowid = p.row`,
  )
    .raw()
    .get(...args, ...args) as number[];
  return now - was;
}

/**
 * How many rows outside the team hold the needle, when the search is kept per one field (the
 * team) and few rows lie outside it, else null. They are read through the search-text index:
 * every row's team is below, above or beside (null) the value, in SQLite's order of values.
 */
function othersMatching(plan: TablePlan, search: SearchPlan, rest: Eq[], needle: string, prepare: (sql: string) => Database.Statement): number | null {
  const value = rest[0].value;
  if (search.where.length !== 1 || (typeof value !== 'number' && typeof value !== 'string')) return null;
  const team = fieldExpr(plan, search.where[0]);
  const part = (cond: string) => `SELECT * FROM (SELECT ${search.column} AS t FROM ${plan.table} INDEXED BY ${search.scanIndex} WHERE ${cond} LIMIT ${OTHER_ROWS + 1})`;
  const parts = [`${team} < ?`, `${team} > ?`, `${team} IS NULL`].map(part).join(' UNION ALL ');
  const [rows, matching] = prepare(`SELECT count(*), count(CASE WHEN instr(t, ?) > 0 THEN 1 END) FROM (${parts})`).raw().get(needle, value, value) as number[];
  return rows > OTHER_ROWS ? null : matching;
}

/**
 * Many hits spread over the team: the page is found by walking the team's search-text index in
 * id order, checking each row's text, and stops when full; the hits are never gathered (at
 * 100,000 of them that takes 15-20 ms). The walk is bounded (an id found by skipping rows of the
 * team's index, four times cheaper than walking them), so hits that gather at the end of the
 * list cost a bounded walk and then the hits' way. Only when the total is known, as it says how
 * many rows the page must hold.
 */
function walkFor(
  plan: TablePlan,
  search: SearchPlan,
  q: Pick<Query, 'sort' | 'page'> & { rest: Filter[]; ids: Eq[]; needle: string; hits: number; total: number },
  prepare: (sql: string) => Database.Statement,
): SearchedPlan['walk'] {
  const sort = q.sort ?? [];
  const byId = sort.length === 1 && sort[0].field === plan.def.idField;
  if (!q.page || !byId || orderTerms(plan, sort).join() !== orderTerms(plan, search.sort).join()) return undefined;
  const size = Math.max(0, q.page.pageSize);
  const offset = Math.max(0, (q.page.page - 1) * size);
  const want = Math.max(0, Math.min(size, q.total - offset));
  // Rows expected before the page is full if the hits are spread evenly (rowids bound the team's size).
  const rows = prepare(`SELECT max(rowid) FROM ${plan.table}`).pluck().get() as number;
  const expected = Math.ceil(((offset + want) * rows) / q.hits);
  const budget = Math.min(WALK_PER_HIT * q.hits, WALK_SLACK * expected + 1_000);
  if (want === 0 || expected > budget) return undefined;
  const where = compileWhere(plan, and(...q.rest));
  const id = fieldExpr(plan, plan.def.idField);
  const dir = sort[0].dir === 'asc' ? 'ASC' : 'DESC';
  const text = [`instr(${search.column}, ?) > 0`, ...q.ids.map(() => `${id} = ?`)].join(' OR ');
  const textParams = [q.needle, ...q.ids.map((b) => b.value)];
  return () => {
    const last = prepare(`SELECT ${id} FROM ${plan.table} WHERE ${where.sql} ORDER BY ${id} ${dir} LIMIT 1 OFFSET ?`).pluck().get(...where.params, budget);
    const bound = last === undefined ? '' : ` AND ${id} ${dir === 'ASC' ? '<=' : '>='} ?`;
    // Ids are unique (they are the key), so the id alone orders the page as findPage's `id, rowid` does.
    const sql = `SELECT rowid FROM ${plan.table} INDEXED BY ${search.scanIndex} WHERE ${where.sql}${bound} AND (${text}) ORDER BY ${id} ${dir} LIMIT ? OFFSET ?`;
    const found = prepare(sql).pluck().all(...where.params, ...(last === undefined ? [] : [last]), ...textParams, want, offset) as number[];
    return found.length === want ? found : null;
  };
}

/**
 * A search of one or two characters reads the team's slice of the scan index, which holds the
 * search text, in the list's order: a page stops when full. The planner is told so, as it would
 * rather take the smaller index without the text. When only the team is fixed beside the text,
 * the total is the team's count of that string in the gram table (corrected for the rows waiting
 * for the sync, as the trigram count is), and the page stops at the last hit it allows
 * (findPage); otherwise the total reads the team's slice too.
 */
function shortSearch(
  plan: TablePlan,
  search: SearchPlan,
  q: Pick<Query, 'sort' | 'sums'> & { rest: Filter[]; ids: Eq[]; needle: string },
  prepare: (sql: string) => Database.Statement,
): SearchedPlan | null {
  const fixed = search.where.every((f) => q.rest.some((x) => x.op === 'eq' && x.field === f && x.value !== null));
  const sameOrder = orderTerms(plan, q.sort ?? []).join() === orderTerms(plan, search.sort).join();
  if (!fixed || !sameOrder) return null;
  const from = `${plan.table} INDEXED BY ${search.scanIndex}`;
  const marker = onlyTeamFixed(search, q.rest, q.sums) ? markerFor(search, q.rest) : null;
  if (marker === null || !isGrammable(q.needle)) return { hits: -1, total: null, from, countFrom: from };
  const counted = prepare(`SELECT n FROM ${search.grams} WHERE m = ? AND g = ?`).pluck().get(marker, q.needle) as number | undefined;
  const total = (counted ?? 0) + pendingChange(plan, search, q.needle, marker, prepare) + idsBeyond(plan, search, q.rest, q.ids, q.needle, prepare);
  return { hits: -1, total, from, countFrom: from };
}

/** Whether the query fixes the search's team by equality and nothing else (and sums nothing): its hits in the team are then the answer. */
function onlyTeamFixed(search: SearchPlan, rest: Filter[], sums: string[] | undefined): boolean {
  return !sums?.length && rest.length === search.where.length && rest.every((x) => x.op === 'eq' && search.where.includes(x.field));
}

/** The marker of the search's `where` values when the query fixes them all by equality. */
function markerFor(search: SearchPlan, rest: Filter[]): string | null {
  if (!search.where.length) return null;
  const values = search.where.map((f) => rest.find((x): x is Eq => x.op === 'eq' && x.field === f)?.value);
  return values.some((v) => v === undefined) ? null : markerOf(values);
}
