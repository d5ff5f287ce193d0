import type { Position } from '../../commands/eventlog/port.js';
import type { CollectionDef, Doc, Filter, Page, Query, ReadStore, Scalar, SortKey } from './port.js';

interface Collection {
  def: CollectionDef;
  docs: Map<string, Doc>;
  /** index key (fields joined) -> value key -> ids */
  indexes: Map<string, Map<string, Set<string>>>;
}

const keyOf = (v: unknown) => (v === null || v === undefined ? '\u0000null' : typeof v + ':' + String(v));

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
    const indexes = new Map<string, Map<string, Set<string>>>();
    for (const fields of def.indexes ?? []) indexes.set(fields.join(','), new Map());
    this.collections.set(def.name, { def, docs: new Map(), indexes });
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
  }

  async remove(collection: string, id: number | string): Promise<void> {
    const c = this.col(collection);
    const old = c.docs.get(String(id));
    if (!old) return;
    this.unindex(c, String(id), old);
    c.docs.delete(String(id));
  }

  async updateWhere(collection: string, filter: Filter, set: Doc): Promise<void> {
    const c = this.col(collection);
    // Collected first: put() re-indexes, and a document deleted then re-added to the index bucket
    // being iterated would be visited again, for ever.
    for (const doc of [...this.candidates(c, filter)]) {
      if (matches(doc, filter, this.textOf)) await this.put(collection, { ...doc, ...set });
    }
  }

  async find<T = Doc>(query: Query): Promise<Page<T>> {
    const c = this.col(query.collection);
    const hits: Doc[] = [];
    const filter = query.filter;
    for (const doc of this.candidates(c, filter)) if (!filter || matches(doc, filter, this.textOf)) hits.push(doc);
    const sums: Record<string, number> = {};
    for (const f of query.sums ?? []) {
      let s = 0;
      for (const d of hits) if (typeof d[f] === 'number') s += d[f] as number;
      sums[f] = Math.round(s * 100) / 100;
    }
    if (query.sort?.length) hits.sort(comparator(query.sort));
    const items = query.page
      ? hits.slice((query.page.page - 1) * query.page.pageSize, query.page.page * query.page.pageSize)
      : hits;
    return { items: items as T[], total: hits.length, sums };
  }

  async getCheckpoint(name: string): Promise<Position | null> {
    return this.checkpoints.get(name) ?? null;
  }

  async setCheckpoint(name: string, position: Position): Promise<void> {
    this.checkpoints.set(name, position);
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

  /** The smallest index bucket an `eq` conjunct allows, else every document. */
  private candidates(c: Collection, filter: Filter | undefined): Iterable<Doc> {
    if (!filter) return c.docs.values();
    const eqs = new Map<string, Scalar>();
    const conjuncts = filter.op === 'and' ? filter.filters : [filter];
    for (const f of conjuncts) if (f.op === 'eq') eqs.set(f.field, f.value);
    let best: Set<string> | null = null;
    for (const [key, index] of c.indexes) {
      const fields = key.split(',');
      if (!fields.every((f) => eqs.has(f))) continue;
      const bucket = index.get(fields.map((f) => keyOf(eqs.get(f))).join('|')) ?? new Set<string>();
      if (!best || bucket.size < best.size) best = bucket;
    }
    if (!best) return c.docs.values();
    const ids = best;
    return (function* () {
      for (const id of ids) {
        const d = c.docs.get(id);
        if (d) yield d;
      }
    })();
  }

  private index(c: Collection, id: string, doc: Doc) {
    for (const [key, index] of c.indexes) {
      const v = key.split(',').map((f) => keyOf(doc[f])).join('|');
      let bucket = index.get(v);
      if (!bucket) index.set(v, (bucket = new Set()));
      bucket.add(id);
    }
  }

  private unindex(c: Collection, id: string, doc: Doc) {
    for (const [key, index] of c.indexes) {
      const v = key.split(',').map((f) => keyOf(doc[f])).join('|');
      const bucket = index.get(v);
      bucket?.delete(id);
      if (bucket?.size === 0) index.delete(v);
    }
  }
}

/** In-memory evaluation of a filter description. Exported for the contract tests. */
export function matches(doc: Doc, f: Filter, textOf: (doc: Doc, fields: string[]) => string): boolean {
  switch (f.op) {
    case 'eq':
      return (doc[f.field] ?? null) === f.value;
    case 'ne':
      return (doc[f.field] ?? null) !== f.value;
    case 'in':
      return f.values.includes((doc[f.field] ?? null) as Scalar);
    case 'gte': {
      const v = doc[f.field];
      return v !== null && v !== undefined && (v as string | number) >= f.value;
    }
    case 'lte': {
      const v = doc[f.field];
      return v !== null && v !== undefined && (v as string | number) <= f.value;
    }
    case 'and':
      return f.filters.every((x) => matches(doc, x, textOf));
    case 'or':
      return f.filters.some((x) => matches(doc, x, textOf));
    case 'contains':
      return textOf(doc, f.fields).includes(f.text.toLowerCase());
  }
}

function comparator(sort: SortKey[]) {
  return (a: Doc, b: Doc): number => {
    for (const s of sort) {
      const x = a[s.field] ?? null;
      const y = b[s.field] ?? null;
      if (x === y) continue;
      const nullsFirst = s.nulls === 'first';
      if (x === null) return nullsFirst ? -1 : 1;
      if (y === null) return nullsFirst ? 1 : -1;
      const c = (x as string | number) < (y as string | number) ? -1 : 1;
      return s.dir === 'asc' ? c : -c;
    }
    return 0;
  };
}
