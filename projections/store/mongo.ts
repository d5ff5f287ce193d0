import { type Collection, type Db, type Document, MongoClient } from 'mongodb';
import { type Position, positionFromString, positionToString } from '../../domain/shared/events.js';
import type { CollectionDef, Doc, Filter, Page, Query, ReadStore, SortKey } from './port.js';

/**
 * Checkpoints live in the read models' database. The projector writes a checkpoint only after the
 * documents it covers are acknowledged, so a process that reads the checkpoint from the primary
 * and then the documents sees them (read-your-writes across API processes).
 */
const CHECKPOINTS = 'checkpoints';
/** Every document has an `_id`, so this matches none (an empty `$or` is an error in MongoDB). */
const MATCH_NONE: Document = { _id: { $in: [] } };

interface CheckpointDoc {
  _id: string;
  position: string;
}

/**
 * The production read store: one MongoDB collection per read model, `_id` = the record's id.
 * Queries are compiled from the same description the memory store evaluates, and the shared
 * contract suite holds both to the same answers (nulls, search literalness, sort order, sums).
 */
export class MongoReadStore implements ReadStore {
  private readonly defs = new Map<string, CollectionDef>();

  constructor(
    private readonly db: Db,
    /** Closed by close() when this store opened it. */
    private readonly client: MongoClient | null = null,
  ) {}

  /** From `mongodb://host:27017/turnout` (TURNOUT_MONGO_URL); the database defaults to `turnout`. */
  static async connect(url: string, dbName = dbNameOf(url)): Promise<MongoReadStore> {
    const client = new MongoClient(url);
    await client.connect();
    return new MongoReadStore(client.db(dbName), client);
  }

  async defineCollection(def: CollectionDef): Promise<void> {
    if (def.name === CHECKPOINTS) throw new Error(`"${CHECKPOINTS}" is reserved for projection checkpoints`);
    if (this.defs.has(def.name)) return;
    const idKey = { [fieldName(def.idField)]: 1 } as const;
    const others = (def.indexes ?? []).filter((fields) => !(fields.length === 1 && fields[0] === def.idField));
    // createIndexes is idempotent, so every process may define the collections it reads.
    await this.db.collection(def.name).createIndexes([
      { key: idKey, unique: true },
      ...others.map((fields) => ({ key: Object.fromEntries(fields.map((f) => [fieldName(f), 1 as const])) })),
    ]);
    if (def.expireAfter) await this.expireAfter(def.name, fieldName(def.expireAfter.field), def.expireAfter.seconds);
    this.defs.set(def.name, def);
  }

  /**
   * A TTL index (https://www.mongodb.com/docs/manual/core/index-ttl/): the server deletes a
   * document once its Date field is older than expireAfterSeconds. A changed period cannot be
   * given to createIndexes (IndexOptionsConflict, code 85): collMod changes it in place.
   */
  private async expireAfter(collection: string, field: string, seconds: number): Promise<void> {
    const key = { [field]: 1 as const };
    try {
      await this.db.collection(collection).createIndex(key, { expireAfterSeconds: seconds });
    } catch (err) {
      if ((err as { code?: number }).code !== 85) throw err;
      await this.db.command({ collMod: collection, index: { keyPattern: key, expireAfterSeconds: seconds } });
    }
  }

  async get<T = Doc>(collection: string, id: number | string): Promise<T | null> {
    const doc = await this.col(collection).findOne({ _id: String(id) }, { projection: { _id: 0 } });
    return (doc as T | null) ?? null;
  }

  async find<T = Doc>(query: Query): Promise<Page<T>> {
    const col = this.col(query.collection);
    const match: Document = { $match: query.filter ? compileFilter(query.filter) : {} };
    const sort = query.sort ?? [];
    const sums = query.sums ?? [];
    // Count and sums cover the whole filtered set, so they are grouped apart from the page.
    const group: Document = { _id: null, total: { $sum: 1 } };
    sums.forEach((f, i) => (group[`s${i}`] = { $sum: `$${fieldName(f)}` }));
    const page = query.page;
    let items: Document[];
    let totals: Document;
    if (page && page.pageSize > 0) {
      // One pass over the matching documents, so the page, its total and its sums come from the
      // same reads. A page is small: the single result document stays far below 16 MB.
      const pageStages = [{ $skip: Math.max(0, (page.page - 1) * page.pageSize) }, { $limit: page.pageSize }];
      const [r] = await col.aggregate([match, { $facet: { items: itemsStages(sort, pageStages), totals: [{ $group: group }] } }], { allowDiskUse: true }).toArray();
      items = r.items;
      totals = r.totals[0] ?? {};
    } else {
      // No page: the items may be many, so they come through a cursor rather than one document.
      const [all, t] = await Promise.all([
        page ? [] : col.aggregate([match, ...itemsStages(sort, [])], { allowDiskUse: true }).toArray(),
        col.aggregate([match, { $group: group }]).toArray(),
      ]);
      items = all;
      totals = t[0] ?? {};
    }
    const sumsOut: Record<string, number> = {};
    // Rounded to cents like the memory store: float sums differ in the last bits between the two.
    sums.forEach((f, i) => (sumsOut[f] = Math.round(Number(totals[`s${i}`] ?? 0) * 100) / 100));
    return { items: items as T[], total: Number(totals.total ?? 0), sums: sumsOut };
  }

  async put(collection: string, doc: Doc): Promise<void> {
    const def = this.def(collection);
    const id = doc[def.idField];
    if (id === undefined || id === null) throw new Error(`${collection}: document without ${def.idField}`);
    const _id = String(id);
    await this.col(collection).replaceOne({ _id }, { ...doc, _id }, { upsert: true });
  }

  async insertIfAbsent(collection: string, doc: Doc): Promise<boolean> {
    const def = this.def(collection);
    const _id = String(doc[def.idField]);
    // An upsert that only sets on insert: one atomic step, whoever else writes the same id.
    const r = await this.col(collection).updateOne({ _id }, { $setOnInsert: { ...doc, _id } }, { upsert: true });
    return r.upsertedCount === 1;
  }

  async updateWhere(collection: string, filter: Filter, set: Doc): Promise<void> {
    const fields = Object.keys(set);
    if (fields.length === 0) return;
    for (const f of fields) fieldName(f);
    await this.col(collection).updateMany(compileFilter(filter), { $set: set });
  }

  async remove(collection: string, id: number | string): Promise<void> {
    await this.col(collection).deleteOne({ _id: String(id) });
  }

  async getCheckpoint(name: string): Promise<Position | null> {
    const doc = await this.checkpoints().findOne({ _id: name });
    return doc ? positionFromString(doc.position) : null;
  }

  async setCheckpoint(name: string, position: Position): Promise<void> {
    await this.checkpoints().updateOne({ _id: name }, { $set: { position: positionToString(position) } }, { upsert: true });
  }

  async close(): Promise<void> {
    await this.client?.close();
  }

  private def(name: string): CollectionDef {
    const def = this.defs.get(name);
    if (!def) throw new Error(`unknown read-model collection ${name}`);
    return def;
  }

  /** Keyed by the id as text, as the memory store is, so get(c, 12) and get(c, '12') agree. */
  private col(name: string): Collection<Document & { _id: string }> {
    this.def(name);
    return this.db.collection<Document & { _id: string }>(name);
  }

  private checkpoints(): Collection<CheckpointDoc> {
    return this.db.collection<CheckpointDoc>(CHECKPOINTS);
  }
}

function itemsStages(sort: SortKey[], pageStages: Document[]): Document[] {
  return [...compileSort(sort), ...pageStages, { $unset: ['_id', ...sort.map((_, i) => nullFlag(i))] }];
}

const nullFlag = (i: number) => `__null${i}`;

/**
 * MongoDB sorts null (and missing) first ascending and last descending; the port wants nulls last
 * in both directions unless asked otherwise. Each key gets a flag (1 = null or missing) sorted
 * before it. `_id` ends every sort so that pages do not overlap when keys tie.
 */
export function compileSort(sort: SortKey[]): Document[] {
  const flags: Document = {};
  const order: Document = {};
  sort.forEach((s, i) => {
    const f = fieldName(s.field);
    flags[nullFlag(i)] = { $cond: [{ $in: [{ $type: `$${f}` }, ['missing', 'null']] }, 1, 0] };
    order[nullFlag(i)] = s.nulls === 'first' ? -1 : 1;
    order[f] = s.dir === 'asc' ? 1 : -1;
  });
  order._id = 1;
  return sort.length ? [{ $addFields: flags }, { $sort: order }] : [{ $sort: order }];
}

/**
 * The filter description as a MongoDB query, with the memory store's semantics: a missing field
 * equals null (`{f: {$eq: null}}` matches both), `ne` keeps documents without the field, and
 * `gte`/`lte` never match null. `contains` is a case-insensitive match of the text as a literal
 * (decisions.md 5) over string fields.
 */
export function compileFilter(f: Filter): Document {
  switch (f.op) {
    case 'eq':
      return { [fieldName(f.field)]: { $eq: f.value } };
    case 'ne':
      return { [fieldName(f.field)]: { $ne: f.value } };
    case 'in':
      return { [fieldName(f.field)]: { $in: f.values } };
    case 'gte':
      return { [fieldName(f.field)]: { $gte: f.value } };
    case 'lte':
      return { [fieldName(f.field)]: { $lte: f.value } };
    case 'and':
      return f.filters.length ? { $and: f.filters.map(compileFilter) } : {};
    case 'or':
      return f.filters.length ? { $or: f.filters.map(compileFilter) } : MATCH_NONE;
    case 'contains': {
      if (f.text === '') return {};
      if (f.fields.length === 0) return MATCH_NONE;
      const pattern = { $regex: escapeRegex(f.text), $options: 'i' };
      return { $or: f.fields.map((field) => ({ [fieldName(field)]: pattern })) };
    }
  }
}

/** Every regex metacharacter escaped, and NUL spelled out (MongoDB refuses it inside a pattern). */
export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\0/g, '\\x00');
}

/** The memory store reads field names as plain keys; MongoDB would read `a.b` as a path and `$x` as an operator. */
function fieldName(name: string): string {
  if (!name || name.startsWith('$') || name.includes('.') || name.includes('\0')) throw new Error(`unsupported field name ${JSON.stringify(name)}`);
  return name;
}

/** The database a MongoDB URL names, else `turnout`. */
export function dbNameOf(url: string): string {
  const m = /^mongodb(?:\+srv)?:\/\/[^/?]*\/([^?]+)/.exec(url);
  return m ? decodeURIComponent(m[1]) : 'turnout';
}
