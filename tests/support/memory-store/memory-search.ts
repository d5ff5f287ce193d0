import type { Doc, Filter, Page, Query, Scalar, SortKey } from '../../../projections/store/port.js';
import { conjunctsOf, searchTextOf } from '../../../projections/store/search-text.js';

/** A growable list of slot numbers, ascending because slots are only ever appended. */
class Postings {
  a = new Int32Array(4);
  n = 0;
  push(slot: number) {
    if (this.n === this.a.length) {
      const b = new Int32Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = slot;
  }
}

/**
 * An n-gram index for the memory store's `contains` filter over one set of fields. Without it a
 * search reads the text of every document of the team: about 150 ms for 100,000 constituents,
 * so a handful of concurrent searches queue far past the 20 ms the API promises (issue 2).
 *
 * Every 2- and 3-character substring of a document's text lists the document's slot. A text
 * that contains the query contains each of the query's grams, so the shortest list among the
 * query's grams holds every match: a superset, which is then checked against each text. A changed document moves to a new slot; the old one is dead (its text null) until
 * the next compaction, so lists never need deleting from.
 *
 * A common search ("an") matches a third of the team. Reading 30,000 documents scattered over
 * the heap, one cache miss each, is what costs then, so each slot also keeps the few fields the
 * store filters and sorts on most (the id and the equality-indexed fields) in compact columns,
 * and a search touches only the documents of the page it returns.
 */
export class SearchIndex {
  private texts: Array<string | null> = [];
  private docs: Array<Doc | null> = [];
  private readonly slotOf = new Map<string, number>();
  private grams = new Map<string, Postings>();
  private dead = 0;
  /** Per kept field, its value in each slot. */
  private readonly columns: Map<string, Scalar[]>;

  constructor(
    readonly fields: string[],
    kept: string[],
  ) {
    this.columns = new Map(kept.map((f) => [f, []]));
  }

  /** Whether `field` is kept per slot, so `value` can answer without reading the document. */
  keeps(field: string): boolean {
    return this.columns.has(field);
  }

  /** A kept field's values, by slot. */
  column(field: string): Scalar[] {
    return this.columns.get(field)!;
  }

  doc(slot: number): Doc {
    return this.docs[slot]!;
  }

  /** The live slot of a document, if it is indexed. */
  slot(id: string): number | undefined {
    return this.slotOf.get(id);
  }

  /** Indexes (or re-indexes) a document under its id. */
  set(id: string, doc: Doc): void {
    const text = searchTextOf(doc, this.fields);
    const slot = this.slotOf.get(id);
    if (slot !== undefined) {
      // Same text: the grams still hold; only the document object changed.
      if (this.texts[slot] === text) {
        this.docs[slot] = doc;
        for (const [f, col] of this.columns) col[slot] = (doc[f] ?? null) as Scalar;
        return;
      }
      this.kill(slot);
    }
    this.add(id, doc, text);
  }

  remove(id: string): void {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return;
    this.kill(slot);
    this.slotOf.delete(id);
  }

  /**
   * The slots whose text contains `text` (lower-cased), ascending; null when the query is too
   * short for the grams (one character), and the caller scans instead.
   */
  match(text: string): number[] | null {
    if (text.length < 2) return null;
    let best: Postings | undefined;
    const n = text.length === 2 ? 2 : 3;
    for (let i = 0; i + n <= text.length; i++) {
      const p = this.grams.get(text.slice(i, i + n));
      if (!p) return [];
      if (!best || p.n < best.n) best = p;
    }
    // A query that is itself a gram has an exact list: only dead slots need skipping.
    const exact = text.length === n;
    const out: number[] = [];
    for (let i = 0; i < best!.n; i++) {
      const s = best!.a[i];
      const t = this.texts[s];
      if (t !== null && (exact || t.includes(text))) out.push(s);
    }
    return out;
  }

  private add(id: string, doc: Doc, text: string): void {
    const slot = this.texts.length;
    this.texts.push(text);
    this.docs.push(doc);
    for (const [f, col] of this.columns) col.push((doc[f] ?? null) as Scalar);
    this.slotOf.set(id, slot);
    const seen = new Set<string>();
    for (let i = 0; i + 2 <= text.length; i++) {
      seen.add(text.slice(i, i + 2));
      if (i + 3 <= text.length) seen.add(text.slice(i, i + 3));
    }
    for (const g of seen) {
      let p = this.grams.get(g);
      if (!p) this.grams.set(g, (p = new Postings()));
      p.push(slot);
    }
  }

  private kill(slot: number): void {
    this.texts[slot] = null;
    this.docs[slot] = null;
    for (const col of this.columns.values()) col[slot] = null;
    this.dead++;
    // Dead slots cost list space and scan time: rebuild once they outnumber the living.
    if (this.dead > 1_000 && this.dead > this.slotOf.size) this.compact();
  }

  private compact(): void {
    const live = [...this.slotOf.entries()].sort((a, b) => a[1] - b[1]);
    const old = { texts: this.texts, docs: this.docs };
    this.texts = [];
    this.docs = [];
    for (const col of this.columns.values()) col.length = 0;
    this.grams = new Map();
    this.slotOf.clear();
    this.dead = 0;
    for (const [id, slot] of live) if (old.texts[slot] !== null) this.add(id, old.docs[slot]!, old.texts[slot]!);
  }
}

/** The slots matching one conjunct of a filter, found through an index, and the conjuncts left. */
export interface Searched {
  index: SearchIndex;
  slots: number[];
  rest: Filter[];
}

/**
 * Finds one conjunct the index can answer: a `contains` of two characters or more, or an `or` of
 * such searches (over the same fields) and id lookups, as the API's `search` parameter makes.
 * The index checks each slot's current text, so the slots match that conjunct exactly.
 */
export function searchConjunct(filter: Filter | undefined, idField: string, indexFor: (fields: string[]) => SearchIndex): Searched | null {
  if (!filter) return null;
  const conjuncts = conjunctsOf(filter);
  next: for (const f of conjuncts) {
    const branches = f.op === 'or' ? f.filters : [f];
    const texts = branches.filter((b) => b.op === 'contains');
    if (texts.length === 0 || texts.some((b) => b.fields.join('\u0001') !== texts[0].fields.join('\u0001'))) continue;
    const index = indexFor(texts[0].fields);
    const found: number[][] = [];
    for (const b of branches) {
      if (b.op === 'eq' && b.field === idField && f.op === 'or') {
        const slot = index.slot(String(b.value));
        found.push(slot === undefined ? [] : [slot]);
        continue;
      }
      const slots = b.op === 'contains' ? index.match(b.text.toLowerCase()) : null;
      if (!slots) continue next;
      found.push(slots);
    }
    const rest = conjuncts.filter((x) => x !== f);
    // A slot found by several branches counts once.
    const slots = found.length === 1 ? found[0] : [...new Set(found.flat())];
    return { index, slots, rest };
  }
  return null;
}

/**
 * The page of a searched query. Equality tests and sort keys on kept fields read the slot
 * columns; other conjuncts, fields and sums read the documents; items are the page's documents.
 */
export function pageOfSearch(s: Searched, query: Query, compile: (f: Filter) => (doc: Doc) => boolean): Page {
  const { index, slots } = s;
  const quick: Array<[Scalar[], Scalar]> = [];
  const others: Filter[] = [];
  for (const f of s.rest) {
    if (f.op === 'eq' && index.keeps(f.field)) quick.push([index.column(f.field), f.value]);
    else others.push(f);
  }
  const test = others.length ? compile({ op: 'and', filters: others }) : null;
  const sort = query.sort ?? [];
  const sortColumns = sort.map((k) => (index.keeps(k.field) ? index.column(k.field) : null));
  const hits: number[] = [];
  const keys: Scalar[][] = sort.map(() => []);
  next: for (const slot of slots) {
    for (const [column, value] of quick) if (column[slot] !== value) continue next;
    if (test && !test(index.doc(slot))) continue;
    hits.push(slot);
    for (let k = 0; k < sort.length; k++) keys[k].push(sortColumns[k] ? sortColumns[k]![slot] : ((index.doc(slot)[sort[k].field] ?? null) as Scalar));
  }
  if (sort.length) sortByKeys(hits, sort, keys);
  const sums: Record<string, number> = {};
  for (const f of query.sums ?? []) {
    let sum = 0;
    for (const slot of hits) {
      const v = index.doc(slot)[f];
      if (typeof v === 'number') sum += v;
    }
    sums[f] = Math.round(sum * 100) / 100;
  }
  const page = query.page ? hits.slice((query.page.page - 1) * query.page.pageSize, query.page.page * query.page.pageSize) : hits;
  return { items: page.map((slot) => index.doc(slot)), total: hits.length, sums };
}

/**
 * Sorts items by keys read once per item (`keys[k][i]`: sort key k of items[i]) rather than by
 * a comparator reading two documents per comparison, and not at all when they already are in
 * order, as a list by id usually is: with tens of thousands of hits, reading documents is the
 * cost. Ties keep the order they were found in (Array.prototype.sort is stable).
 */
export function sortByKeys<T>(items: T[], sort: SortKey[], keys: Scalar[][]): void {
  const cmp = (i: number, j: number): number => {
    for (let k = 0; k < sort.length; k++) {
      const x = keys[k][i];
      const y = keys[k][j];
      if (x === y) continue;
      const nullsFirst = sort[k].nulls === 'first';
      if (x === null) return nullsFirst ? -1 : 1;
      if (y === null) return nullsFirst ? 1 : -1;
      const c = (x as string | number) < (y as string | number) ? -1 : 1;
      return sort[k].dir === 'asc' ? c : -c;
    }
    return 0;
  };
  let ordered = true;
  for (let i = 1; i < items.length && ordered; i++) ordered = cmp(i - 1, i) <= 0;
  if (ordered) return;
  const order = Array.from({ length: items.length }, (_, i) => i).sort(cmp);
  const copy = items.slice();
  for (let i = 0; i < order.length; i++) items[i] = copy[order[i]];
}
