import { comparePositions, type Position } from '../../../domain/shared/events.js';
import { START } from '../../../projections/engine/step.js';
import { conjunctsOf } from '../../../projections/store/search-text.js';
import { pageOfSearch, SearchIndex, searchConjunct, sortByKeys } from './memory-search.js';
import { type CheckpointMove, CheckpointMoved, type CollectionDef, type Doc, type Filter, type Page, type Query, type ReadStore, type Scalar } from '../../../projections/store/port.js';

interface Collection {
  def: CollectionDef;
  docs: Map<string, Doc>;
  indexes: Index[];
  /** n-gram indexes for `contains`, per field set, built on the first search that needs one. */
  search: Map<string, SearchIndex>;
}

/** An equality index: the fields' values, keyed together, to the ids of the documents holding them. */
interface Index {
  fields: string[];
  ids: Map<string, Set<string>>;
}

const keyOf = (v: unknown) => (v === null || v === undefined ? '\u0000null' : typeof v + ':' + String(v));

/** The index key of a document, or of the values a query asks for (a Map of field to value). */
function indexKey(fields: string[], values: Doc | Map<string, unknown>): string {
  const byField = values instanceof Map;
  let key = '';
  for (let i = 0; i < fields.length; i++) {
    const v = byField ? values.get(fields[i]) : values[fields[i]];
    key = i === 0 ? keyOf(v) : key + '|' + keyOf(v);
  }
  return key;
}

/**
 * The embedded read store: documents in memory, rebuilt from the log at start, with hash indexes
 * on the equality fields each collection declares. Queries are evaluated from their description.
 */
export class MemoryReadStore implements ReadStore {
  private readonly collections = new Map<string, Collection>();
  private readonly checkpoints = new Map<string, Position>();
  /** Lower-cased search text per document and field set; documents are replaced, never mutated. */
  private readonly searchText = new WeakMap<Doc, Map<string, string>>();

  async defineCollection(def: CollectionDef): Promise<void> {
    if (this.collections.has(def.name)) return;
    const indexes = (def.indexes ?? []).map((fields) => ({ fields: [...fields], ids: new Map<string, Set<string>>() }));
    this.collections.set(def.name, { def, docs: new Map(), indexes, search: new Map() });
  }

  private col(name: string): Collection {
    const c = this.collections.get(name);
    if (!c) throw new Error(`unknown read-model collection ${name}`);
    return c;
  }

  async get<T = Doc>(collection: string, id: number | string): Promise<T | null> {
    return (this.col(collection).docs.get(String(id)) as T | undefined) ?? null;
  }

  async put(collection: string, doc: Doc): Promise<void> {
    const c = this.col(collection);
    const id = String(doc[c.def.idField]);
    const old = c.docs.get(id);
    if (old) this.unindex(c, id, old);
    c.docs.set(id, doc);
    this.index(c, id, doc);
    for (const s of c.search.values()) s.set(id, doc);
  }

  async insertIfAbsent(collection: string, doc: Doc): Promise<boolean> {
    const c = this.col(collection);
    if (c.docs.has(String(doc[c.def.idField]))) return false;
    await this.put(collection, doc);
    return true;
  }

  async remove(collection: string, id: number | string): Promise<void> {
    const c = this.col(collection);
    const old = c.docs.get(String(id));
    if (!old) return;
    this.unindex(c, String(id), old);
    c.docs.delete(String(id));
    for (const s of c.search.values()) s.remove(String(id));
  }

  async updateWhere(collection: string, filter: Filter, set: Doc): Promise<void> {
    const c = this.col(collection);
    // Collected first: put() re-indexes, and a document deleted then re-added to the index bucket
    // being iterated would be visited again, for ever.
    const test = compileFilter(filter, this.textOf);
    for (const doc of [...this.candidates(c, filter)]) {
      if (test(doc)) await this.put(collection, { ...doc, ...set });
    }
  }

  async find<T = Doc>(query: Query): Promise<Page<T>> {
    const c = this.col(query.collection);
    const searched = searchConjunct(query.filter, c.def.idField, (fields) => this.searchIndex(c, fields));
    if (searched) return pageOfSearch(searched, query, (f) => compileFilter(f, this.textOf)) as Page<T>;
    const hits: Doc[] = [];
    // Sort keys are read as each hit is found, while the document is still in the CPU's cache.
    const sort = query.sort ?? [];
    const keys: Scalar[][] = sort.map(() => []);
    const take = (doc: Doc) => {
      hits.push(doc);
      for (let k = 0; k < sort.length; k++) keys[k].push((doc[sort[k].field] ?? null) as Scalar);
    };
    const filter = query.filter;
    const test = filter ? compileFilter(filter, this.textOf) : () => true;
    for (const doc of this.candidates(c, filter)) if (test(doc)) take(doc);
    const sums: Record<string, number> = {};
    for (const f of query.sums ?? []) {
      let s = 0;
      for (const d of hits) if (typeof d[f] === 'number') s += d[f] as number;
      sums[f] = Math.round(s * 100) / 100;
    }
    if (sort.length) sortByKeys(hits, sort, keys);
    const items = query.page
      ? hits.slice((query.page.page - 1) * query.page.pageSize, query.page.page * query.page.pageSize)
      : hits;
    return { items: items as T[], total: hits.length, sums };
  }

  async scan<T = Doc>(collection: string, filter: Filter, key: string, limit: number): Promise<T[]> {
    return (await this.find<T>({ collection, filter, sort: [{ field: key, dir: 'asc' }], page: { page: 1, pageSize: limit } })).items;
  }

  async getCheckpoint(name: string): Promise<Position | null> {
    return this.checkpoints.get(name) ?? null;
  }

  async setCheckpoint(name: string, position: Position): Promise<void> {
    this.checkpoints.set(name, position);
  }

  /** ReadStore.moveCheckpoints, as MongoDB's: each a compare-and-set (through setCheckpoint, which tests wrap). */
  async moveCheckpoints(moves: ReadonlyArray<CheckpointMove>): Promise<void> {
    for (const { name, from, to } of moves) {
      const at = this.checkpoints.get(name) ?? START;
      if (comparePositions(at, from) !== 0) throw new CheckpointMoved(name);
      await this.setCheckpoint(name, to);
    }
  }

  async close(): Promise<void> {}

  private readonly textOf = (doc: Doc, fields: string[]): string => {
    const key = fields.join('\u0001');
    let perDoc = this.searchText.get(doc);
    if (!perDoc) this.searchText.set(doc, (perDoc = new Map()));
    let text = perDoc.get(key);
    if (text === undefined) {
      text = fields.map((f) => (doc[f] == null ? '' : String(doc[f]).toLowerCase())).join('\u0001');
      perDoc.set(key, text);
    }
    return text;
  };

  private searchIndex(c: Collection, fields: string[]): SearchIndex {
    const key = fields.join('\u0001');
    let s = c.search.get(key);
    if (!s) {
      // The id and the equality-indexed fields are kept per slot: searches filter and sort on them.
      const kept = new Set([c.def.idField, ...(c.def.indexes ?? []).flat()]);
      c.search.set(key, (s = new SearchIndex(fields, [...kept])));
      for (const [id, doc] of c.docs) s.set(id, doc);
    }
    return s;
  }

  /** The smallest index bucket an `eq` conjunct allows, else every document. */
  private candidates(c: Collection, filter: Filter | undefined): Iterable<Doc> {
    if (!filter || c.indexes.length === 0) return c.docs.values();
    const eqs = new Map<string, Scalar>();
    // Flattened: a lookup by email inside `and(...)` with a search still finds its index.
    if (filter.op === 'eq') eqs.set(filter.field, filter.value);
    else for (const f of conjunctsOf(filter)) if (f.op === 'eq') eqs.set(f.field, f.value);
    let best: Set<string> | null = null;
    for (const index of c.indexes) {
      if (!index.fields.every((f) => eqs.has(f))) continue;
      const bucket = index.ids.get(indexKey(index.fields, eqs));
      if (!bucket) return [];
      if (!best || bucket.size < best.size) best = bucket;
    }
    if (!best) return c.docs.values();
    const docs: Doc[] = [];
    for (const id of best) {
      const d = c.docs.get(id);
      if (d) docs.push(d);
    }
    return docs;
  }

  private index(c: Collection, id: string, doc: Doc) {
    for (const index of c.indexes) {
      const v = indexKey(index.fields, doc);
      let bucket = index.ids.get(v);
      if (!bucket) index.ids.set(v, (bucket = new Set()));
      bucket.add(id);
    }
  }

  private unindex(c: Collection, id: string, doc: Doc) {
    for (const index of c.indexes) {
      const v = indexKey(index.fields, doc);
      const bucket = index.ids.get(v);
      bucket?.delete(id);
      if (bucket?.size === 0) index.ids.delete(v);
    }
  }
}

/** In-memory evaluation of a filter description. Exported for the contract tests. */
export function matches(doc: Doc, f: Filter, textOf: (doc: Doc, fields: string[]) => string): boolean {
  return compileFilter(f, textOf)(doc);
}

/**
 * A filter turned into a predicate once per query rather than interpreted per document: a
 * search over 100,000 documents otherwise spends most of its time re-reading the description.
 */
export function compileFilter(f: Filter, textOf: (doc: Doc, fields: string[]) => string): (doc: Doc) => boolean {
  switch (f.op) {
    case 'eq': {
      const { field, value } = f;
      return (doc) => (doc[field] ?? null) === value;
    }
    case 'ne': {
      const { field, value } = f;
      return (doc) => (doc[field] ?? null) !== value;
    }
    case 'in': {
      const { field, values } = f;
      return (doc) => values.includes((doc[field] ?? null) as Scalar);
    }
    case 'gte': {
      const { field, value } = f;
      return (doc) => {
        const v = doc[field];
        return v !== null && v !== undefined && (v as string | number) >= value;
      };
    }
    case 'lte': {
      const { field, value } = f;
      return (doc) => {
        const v = doc[field];
        return v !== null && v !== undefined && (v as string | number) <= value;
      };
    }
    case 'and': {
      const ps = f.filters.map((x) => compileFilter(x, textOf));
      if (ps.length === 1) return ps[0];
      return (doc) => {
        for (let i = 0; i < ps.length; i++) if (!ps[i](doc)) return false;
        return true;
      };
    }
    case 'or': {
      const ps = f.filters.map((x) => compileFilter(x, textOf));
      return (doc) => {
        for (let i = 0; i < ps.length; i++) if (ps[i](doc)) return true;
        return false;
      };
    }
    case 'contains': {
      const { fields } = f;
      const text = f.text.toLowerCase();
      return (doc) => textOf(doc, fields).includes(text);
    }
  }
}
