import type { Position } from '../../domain/shared/events.js';

/**
 * The read-store port. A query is described once, as data (filters, a search, a sort, a page,
 * sums), and each adapter compiles it: to SQL (sqlite.ts), to in-memory evaluation (the tests' oracle, tests/support/memory-store/)
 * and to MongoDB filters (mongo.ts).
 */

export type Scalar = string | number | boolean | null;

export type Filter =
  | { op: 'eq'; field: string; value: Scalar }
  | { op: 'ne'; field: string; value: Scalar }
  | { op: 'in'; field: string; values: Scalar[] }
  | { op: 'gte' | 'lte'; field: string; value: string | number }
  | { op: 'and'; filters: Filter[] }
  | { op: 'or'; filters: Filter[] }
  /** Case-insensitive literal substring over the fields (decisions.md 5). */
  | { op: 'contains'; fields: string[]; text: string };

export interface SortKey {
  field: string;
  dir: 'asc' | 'desc';
  /** Where null values go; the default is last for both directions. */
  nulls?: 'first' | 'last';
}

export interface Query {
  collection: string;
  filter?: Filter;
  sort?: SortKey[];
  page?: { page: number; pageSize: number };
  /** Fields summed over the whole filtered set, not only the page. */
  sums?: string[];
}

export type Doc = Record<string, unknown>;

export interface Page<T = Doc> {
  items: T[];
  total: number;
  sums: Record<string, number>;
}

export interface CollectionDef {
  name: string;
  /** The field holding the record's id (PkConstituent, ...). */
  idField: string;
  /** Fields looked up by equality; each gets an index (with the team field first where it has one). */
  indexes?: string[][];
  /**
   * Orders the lists page through, each after equality on `where` (the team field): stores that
   * need an index to page in order without sorting make one per entry (the SQLite store does).
   */
  sorts?: OrderDef[];
  /**
   * Field sets that `contains` searches (decisions.md 5), each with the equality fields and
   * order of the searched list. Stores that index text keep an index for them (SQLite: one FTS5
   * trigram index per set; MongoDB: n-grams of every field of every set, mongo-search.ts). A
   * `contains` over fields no set names still works, by reading every candidate document; with
   * no sets at all, MongoDB keeps n-grams of every string field.
   */
  search?: SearchDef[];
  /**
   * Documents expire once `field` (a Date) is older than `seconds`: a TTL index on MongoDB, whose
   * monitor deletes them within about a minute. The memory store lives no longer than its
   * process and ignores it.
   */
  expireAfter?: { field: string; seconds: number };
  /**
   * The version of the projector that writes it (engine/step.ts defineReadModels sets it). A
   * store that processes of several builds share (MongoDB) keeps each version's collection apart,
   * named after it, so that a new version is built beside the one the old build reads
   * (docs/production.md); a store of one process ignores it.
   */
  version?: number;
  /**
   * The fields every document holds, null when unset (a record's public fields, decisions.md 3),
   * in their order. A store may keep a document without its null ones and give them back as
   * null (the SQLite store does: at a million records they were a third of its rows).
   */
  fields?: readonly string[];
  /**
   * No projector looks this collection up by its `indexes` (they serve the API's reads only;
   * projectors read it by id at most): a store that builds it in bulk may leave those indexes out
   * until the load's end and build each once, sorted (the SQLite store does).
   */
  lookupsOutsideProjection?: boolean;
}

export interface OrderDef {
  where?: string[];
  sort: SortKey[];
}

export interface SearchDef extends Partial<OrderDef> {
  fields: string[];
}

/** Every field some search set names, or undefined when the collection declares none. */
export const searchedFields = (def: CollectionDef): string[] | undefined => (def.search ? [...new Set(def.search.flatMap((s) => s.fields))] : undefined);

export interface ReadStore {
  defineCollection(def: CollectionDef): Promise<void>;
  get<T = Doc>(collection: string, id: number | string): Promise<T | null>;
  find<T = Doc>(query: Query): Promise<Page<T>>;
  /** Replaces (or inserts) the whole document. */
  put(collection: string, doc: Doc): Promise<void>;
  /** Inserts the document unless one with its id exists, atomically; true when it inserted. */
  insertIfAbsent(collection: string, doc: Doc): Promise<boolean>;
  /** Sets fields on every document matching the filter. */
  updateWhere(collection: string, filter: Filter, set: Doc): Promise<void>;
  remove(collection: string, id: number | string): Promise<void>;
  /**
   * Optional: one document as the text of a JSON object of `shape.fields` in their order (null
   * for a field it lacks), with the values of `shape.pick`; null when there is none. A store that
   * keeps documents as JSON text (SQLite) writes it from the row without making the document, so a
   * single read answers it as it is, unserialised; synchronous, so that read makes no promise.
   * Others leave it out, and their readers use get().
   */
  getJson?(collection: string, id: number | string, shape: JsonShape): { json: string; picked: unknown[] } | null;
  /**
   * Optional: up to `limit` documents matching `filter`, in ascending order of `key` (a unique
   * field that an index of the collection names after the filter's equality fields), without a
   * total: a reader that pages by key from where it stands (the change feed from its cursor,
   * dispatcher/feed-model.ts) reads its page and nothing more, where find() would count the rest.
   */
  scan?<T = Doc>(collection: string, filter: Filter, key: string, limit: number): Promise<T[]>;
  /**
   * Optional: the collections of the other versions of read model `name` that the store holds
   * (MongoDB keeps one per version, for the builds sharing it: mongo-versions.ts), each as a view
   * of this store that reads and writes that version's collection under `name`. An erasure
   * cleans them too (decisions.md §17); a store of one process has none and leaves it out.
   */
  otherVersions?(name: string): Promise<ReadStore[]>;
  getCheckpoint(name: string): Promise<Position | null>;
  /**
   * A number that changes whenever any document may have changed since it was last asked (a
   * write by any connection or process), cheaper than a read: what a reader may cache stands
   * while it is the same. A store that cannot tell cheaply (MongoDB) leaves it out, and its
   * readers read.
   */
  changeMark?(): number;
  setCheckpoint(name: string, position: Position): Promise<void>;
  /** Several checkpoints in one write, where the store can (a step moves every projector's). */
  setCheckpoints?(checkpoints: ReadonlyArray<readonly [string, Position]>): Promise<void>;
  /**
   * Optional, on a store several processes write over time (MongoDB, where builds share read-model
   * versions and each version's lease passes between them: engine/ownership.ts): moves each
   * checkpoint to `to` only where it still holds `from`, what this writer last read or wrote of it
   * (START where it read none), and throws CheckpointMoved where it holds another position: a
   * writer whose lease passed while it applied finds its successor's checkpoint there. In a
   * transaction nothing of the step lands; outside one, the moves before it in the list stand.
   * A store that one process writes at a time leaves it out (the step then uses setCheckpoints).
   */
  moveCheckpoints?(moves: ReadonlyArray<CheckpointMove>): Promise<void>;
  /**
   * The store's transactions, where it has them (SQLite: the connection's; MongoDB: a session's,
   * on a replica set or sharded cluster only). Null, or left out, where it has none (the tests'
   * memory store, a standalone MongoDB server): the projection engine then writes each
   * projector's checkpoint after its writes, and relies on projectors being idempotent
   * (engine/step.ts).
   */
  transactions?(): Promise<Transactions | null>;
  /**
   * Optional: true where a declared field (CollectionDef.fields) that a put's document lacks
   * reads back as null, the row stored being the same either way (SQLite's storedDoc keeps no
   * declared null), so a writer may leave a new document's unset fields out. Only the offline
   * rebuild's store says so (runtime/rebuild-store.ts), where a million creates each made a
   * document of every field.
   */
  readonly unsetReadsAsNull?: boolean;
  close(): Promise<void>;
}

/** What ReadStore.getJson writes and picks; made once and passed as the same object each time (stores key their compiled read by it). */
export interface CheckpointMove {
  name: string;
  from: Position;
  to: Position;
}

/** A checkpoint another writer moved since this one read or wrote it (ReadStore.moveCheckpoints). */
export class CheckpointMoved extends Error {
  constructor(readonly checkpoint: string) {
    super(`checkpoint ${checkpoint} was moved by another writer`);
    this.name = 'CheckpointMoved';
  }
}

export interface JsonShape {
  readonly fields: readonly string[];
  readonly pick: readonly string[];
}

export interface Transactions {
  /**
   * Runs `work` against the store it is handed: every write it makes lands together, or none
   * does when it throws. The work may be run again (MongoDB retries a transaction that met a
   * transient error), so it reads what it needs inside.
   */
  run<T>(work: (store: ReadStore) => Promise<T>): Promise<T>;
}

/** The character `contains` joins a document's fields with (search-text.ts searchTextOf). */
const FIELD_JOIN = '\u0001';

// ---- small builders so call sites read as the rule they state ----
export const eq = (field: string, value: Scalar): Filter => ({ op: 'eq', field, value });
export const and = (...filters: Array<Filter | undefined | false>): Filter => ({
  op: 'and',
  filters: filters.filter((f): f is Filter => Boolean(f)),
});
export const or = (...filters: Filter[]): Filter => ({ op: 'or', filters });
export const gte = (field: string, value: string | number): Filter => ({ op: 'gte', field, value });
export const lte = (field: string, value: string | number): Filter => ({ op: 'lte', field, value });

/**
 * The `search` parameter: case-insensitive substring over the named fields, and an all-digit
 * search also matches the record's id exactly (decisions.md 5).
 */
export function searchFilter(text: string, fields: string[], idField: string): Filter {
  // `contains` over several fields reads them joined by U+0001 (search-text.ts): a search holding
  // that character would match across two fields, or match every record. The search is literal,
  // within one field: each field is asked on its own (no field set declares that, so row by row;
  // such a search is never typed by a person).
  if (text.includes(FIELD_JOIN) && fields.length > 1) return or(...fields.map((f): Filter => ({ op: 'contains', fields: [f], text })));
  const contains: Filter = { op: 'contains', fields, text };
  return /^\d+$/.test(text) && Number.isSafeInteger(Number(text)) ? or(contains, eq(idField, Number(text))) : contains;
}

/** Internal bookkeeping fields start with `_` and never leave the API. */
export type PublicView<T> = { [K in keyof T as K extends `_${string}` ? never : K]: T[K] };
export function publicView<T extends object>(doc: T): PublicView<T> {
  const out: Doc = {};
  for (const k of Object.keys(doc)) if (k.charCodeAt(0) !== 95 /* _ */) out[k] = (doc as Doc)[k];
  return out as PublicView<T>;
}
