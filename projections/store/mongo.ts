import { type ClientSession, type Collection, type Db, type Document, MongoClient, MongoServerError } from 'mongodb';
import { type Position, positionFromString, positionToString } from '../../domain/shared/events.js';
import { containsField, escapeRegex, NGRAMS, ngramsOf } from './mongo-search.js';
import { versionedName, versionOf } from './mongo-versions.js';
import { type CheckpointMove, CheckpointMoved, type CollectionDef, type Doc, type Filter, type Page, type Query, type ReadStore, searchedFields, type SortKey, type Transactions } from './port.js';

export { escapeRegex };

/**
 * Checkpoints live in the read models' database. The projector writes a checkpoint only after the
 * documents it covers are acknowledged, so a process that reads the checkpoint from the primary
 * and then the documents sees them (read-your-writes across API processes).
 */
export const MONGO_CHECKPOINTS = 'checkpoints';
const CHECKPOINTS = MONGO_CHECKPOINTS;
/** The server's duplicate-key error: an upsert whose filter missed a document that exists. */
const DUPLICATE_KEY = 11000;
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
  /** Per collection, the fields whose n-grams are kept (every string field where none are named). */
  private readonly searched = new Map<string, string[] | undefined>();
  /** Per collection, the name it has in the database (its version's). */
  private readonly physical = new Map<string, string>();
  /** Set on a view of the store bound to a transaction's session (transactions()): every operation passes it. */
  private session: ClientSession | undefined = undefined;
  private transactional: Promise<Transactions | null> | null = null;

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
    // Read and written by its own name, kept under its version's (mongo-versions.ts).
    const physical = versionedName(def.name, def.version);
    this.physical.set(def.name, physical);
    const idKey = { [fieldName(def.idField)]: 1 } as const;
    const others = (def.indexes ?? []).filter((fields) => !(fields.length === 1 && fields[0] === def.idField));
    // createIndexes is idempotent, so every process may define the collections it reads.
    await this.db.collection(physical).createIndexes([
      { key: idKey, unique: true },
      ...others.map((fields) => ({ key: Object.fromEntries(fields.map((f) => [fieldName(f), 1 as const])) })),
      // Multikey: one entry per gram, for substring search (mongo-search.ts).
      { key: { [NGRAMS]: 1 } },
    ]);
    this.searched.set(def.name, searchedFields(def));
    await this.backfillNgrams(def);
    if (def.expireAfter) await this.expireAfter(physical, fieldName(def.expireAfter.field), def.expireAfter.seconds);
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

  /** Documents written before substring search had its index get their grams (once; then none lack them). */
  private async backfillNgrams(def: CollectionDef): Promise<void> {
    const col = this.db.collection<Document & { _id: string }>(versionedName(def.name, def.version));
    const batch: Array<{ updateOne: { filter: Document; update: Document } }> = [];
    for await (const doc of col.find({ [NGRAMS]: { $exists: false } })) {
      batch.push({ updateOne: { filter: { _id: doc._id }, update: { $set: { [NGRAMS]: ngramsOf(doc, this.searched.get(def.name)) } } } });
      if (batch.length >= 500) await col.bulkWrite(batch.splice(0));
    }
    if (batch.length) await col.bulkWrite(batch);
  }

  async get<T = Doc>(collection: string, id: number | string): Promise<T | null> {
    const doc = await this.col(collection).findOne({ _id: String(id) }, { projection: HIDDEN, ...this.inSession() });
    return (doc as T | null) ?? null;
  }

  /**
   * A page is one find().sort().skip().limit() (two where nulls must go on the other side of the
   * first key than MongoDB puts them: see pageOf), which an index on the filter and sort fields
   * serves; the total is a countDocuments of the filter, and sums an aggregation run only when
   * asked for. countDocuments is exact, and reads the index where the filter has one; an estimated
   * count would ignore the filter, so it is not used.
   */
  async find<T = Doc>(query: Query): Promise<Page<T>> {
    const def = this.def(query.collection);
    const col = this.col(query.collection);
    const filter = query.filter ? compileFilter(query.filter, this.searched.get(def.name)) : {};
    const sort = query.sort ?? [];
    const sums = query.sums ?? [];
    const page = query.page;
    const session = this.session;
    const reads = [
      () => (page && page.pageSize <= 0 ? [] : pageOf(col, filter, sort, page, session)),
      () => col.countDocuments(filter, this.options()),
      () => (sums.length ? sumsOf(col, filter, sums, session) : {}),
    ] as const;
    // A transaction's operations may not run in parallel (ClientSession.withTransaction).
    const [items, total, totals] = session
      ? [await reads[0](), await reads[1](), await reads[2]()]
      : await Promise.all([reads[0](), reads[1](), reads[2]()]);
    const sumsOut: Record<string, number> = {};
    // Rounded to cents like the memory store: float sums differ in the last bits between the two.
    sums.forEach((f, i) => (sumsOut[f] = Math.round(Number((totals as Document)[`s${i}`] ?? 0) * 100) / 100));
    return { items: items as T[], total, sums: sumsOut };
  }

  /** ReadStore.scan: one find().sort().limit(), with no count, served by the index on the filter's fields and the key. */
  async scan<T = Doc>(collection: string, filter: Filter, key: string, limit: number): Promise<T[]> {
    const def = this.def(collection);
    const docs = await this.col(collection)
      .find(compileFilter(filter, this.searched.get(def.name)), { projection: HIDDEN, ...this.inSession() })
      .sort({ [fieldName(key)]: 1 })
      .limit(limit)
      .toArray();
    return docs as T[];
  }

  async put(collection: string, doc: Doc): Promise<void> {
    const def = this.def(collection);
    const id = doc[def.idField];
    if (id === undefined || id === null) throw new Error(`${collection}: document without ${def.idField}`);
    const _id = String(id);
    await this.col(collection).replaceOne({ _id }, { ...doc, _id, [NGRAMS]: ngramsOf(doc, this.searched.get(def.name)) }, { upsert: true, ...this.inSession() });
  }

  async insertIfAbsent(collection: string, doc: Doc): Promise<boolean> {
    const def = this.def(collection);
    const _id = String(doc[def.idField]);
    // An upsert that only sets on insert: one atomic step, whoever else writes the same id.
    const r = await this.col(collection).updateOne({ _id }, { $setOnInsert: { ...doc, _id, [NGRAMS]: ngramsOf(doc, this.searched.get(def.name)) } }, { upsert: true, ...this.inSession() });
    return r.upsertedCount === 1;
  }

  async updateWhere(collection: string, filter: Filter, set: Doc): Promise<void> {
    const fields = Object.keys(set);
    if (fields.length === 0) return;
    for (const f of fields) fieldName(f);
    const def = this.def(collection);
    const col = this.col(collection);
    const fieldsOf = this.searched.get(def.name);
    const changesText = fields.some((f) => (fieldsOf ? fieldsOf.includes(f) : true) && (typeof set[f] === 'string' || set[f] == null));
    if (!changesText) {
      await col.updateMany(compileFilter(filter, fieldsOf), { $set: set }, this.options());
      return;
    }
    // A searchable text changes: each document's grams are made again from its new text.
    const batch: Array<{ updateOne: { filter: Document; update: Document } }> = [];
    for await (const doc of col.find(compileFilter(filter, fieldsOf), this.options())) {
      batch.push({ updateOne: { filter: { _id: doc._id }, update: { $set: { ...set, [NGRAMS]: ngramsOf({ ...doc, ...set }, fieldsOf) } } } });
      if (batch.length >= 500) await col.bulkWrite(batch.splice(0), this.options());
    }
    if (batch.length) await col.bulkWrite(batch, this.options());
  }

  async remove(collection: string, id: number | string): Promise<void> {
    await this.col(collection).deleteOne({ _id: String(id) }, this.options());
  }

  /** ReadStore.otherVersions: every `<name>.v<n>` collection of the database but this store's own. */
  async otherVersions(name: string): Promise<ReadStore[]> {
    const own = this.physical.get(this.def(name).name);
    const names = (await this.db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
    return names
      .filter((n) => n !== own && versionOf(n)?.name === name)
      .sort()
      .map((n) => {
        const view = Object.create(this) as MongoReadStore;
        (view as unknown as { physical: Map<string, string> }).physical = new Map(this.physical).set(name, n);
        return view;
      });
  }

  async getCheckpoint(name: string): Promise<Position | null> {
    const doc = await this.checkpoints().findOne({ _id: name }, this.options());
    return doc ? positionFromString(doc.position) : null;
  }

  async setCheckpoint(name: string, position: Position): Promise<void> {
    await this.checkpoints().updateOne({ _id: name }, { $set: { position: positionToString(position) } }, { upsert: true, ...this.inSession() });
  }

  /**
   * ReadStore.moveCheckpoints: one compare-and-set a checkpoint, its filter naming the position
   * this writer knew. From a position, an update that matches nothing means the document holds
   * another (or was dropped: `--drop-unused`), and it is not made again. From the start, an
   * upsert: where there is no document it makes one; where another writer made one, the filter
   * misses, the upsert tries to insert and the unique `_id` refuses it (11000). In a transaction
   * the refusal aborts it, and a move another transaction committed after this one's snapshot is
   * a write conflict, which the driver's withTransaction runs again (and then finds it moved).
   */
  async moveCheckpoints(moves: ReadonlyArray<CheckpointMove>): Promise<void> {
    for (const { name, from, to } of moves) {
      const fresh = from.commit === 0n && from.prepare === 0n;
      // A position stored as its commit alone (positionFromString reads both) is the same position.
      const known = from.commit === from.prepare ? { $in: [positionToString(from), String(from.commit)] } : positionToString(from);
      let matched: boolean;
      try {
        const result = await this.checkpoints().updateOne({ _id: name, position: known }, { $set: { position: positionToString(to) } }, { upsert: fresh, ...this.inSession() });
        matched = result.matchedCount > 0 || result.upsertedCount > 0;
      } catch (err) {
        if (err instanceof MongoServerError && err.code === DUPLICATE_KEY) throw new CheckpointMoved(name);
        throw err;
      }
      if (!matched) throw new CheckpointMoved(name);
    }
  }

  /**
   * Session transactions, on a replica set or a sharded cluster (a standalone server has none:
   * https://www.mongodb.com/docs/manual/core/transactions/), asked of the server once.
   */
  transactions(): Promise<Transactions | null> {
    if (this.session) throw new Error('a transaction does not nest');
    return (this.transactional ??= this.askTransactions().catch((err) => {
      // Asked again next time: the server may be back.
      this.transactional = null;
      throw err;
    }));
  }

  private async askTransactions(): Promise<Transactions | null> {
    const client = this.client;
    if (!client) return null;
    const hello = await this.db.command({ hello: 1 });
    if (!hello.setName && hello.msg !== 'isdbgrid') return null;
    return {
      run: (work) => client.withSession((session) => session.withTransaction(() => work(this.boundTo(session)))),
    };
  }

  /** This store seen through a transaction's session: the same definitions, every operation in the session. */
  private boundTo(session: ClientSession): MongoReadStore {
    const view = Object.create(this) as MongoReadStore;
    view.session = session;
    return view;
  }

  /** The options of an operation: the session, when bound to one; none otherwise (undefined, as the driver's default). */
  private options(): { session: ClientSession } | undefined {
    return this.session ? { session: this.session } : undefined;
  }

  private inSession(): { session?: ClientSession } {
    return this.session ? { session: this.session } : {};
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
    return this.db.collection<Document & { _id: string }>(this.physical.get(name)!);
  }

  private checkpoints(): Collection<CheckpointDoc> {
    return this.db.collection<CheckpointDoc>(CHECKPOINTS);
  }
}

/** Never returned: MongoDB's key and the search grams. */
const HIDDEN = { _id: 0, [NGRAMS]: 0 } as const;

/**
 * MongoDB sorts null (and missing) first ascending and last descending; the port wants nulls last
 * in both directions unless asked otherwise. Where the first key's nulls belong on MongoDB's other
 * side, the page is read from two finds, the non-null documents and the null ones, in the order
 * the port wants, each sorted by an index. A later key whose nulls are on the other side cannot be
 * split that way (its nulls lie within each value of the keys before it): such a sort goes through
 * the aggregation with a null flag per key (compileSort), which no index serves.
 */
async function pageOf(col: Collection<Document & { _id: string }>, filter: Document, sort: SortKey[], page?: { page: number; pageSize: number }, session?: ClientSession): Promise<Document[]> {
  const inSession = session ? { session } : {};
  const skip = page ? Math.max(0, (page.page - 1) * page.pageSize) : 0;
  const limit = page ? page.pageSize : 0; // 0: no limit
  const order = mongoOrder(sort);
  if (sort.slice(1).some(nullsOtherSide)) {
    const stages: Document[] = [{ $match: filter }, ...compileSort(sort), ...(skip ? [{ $skip: skip }] : []), ...(limit ? [{ $limit: limit }] : [])];
    return col.aggregate([...stages, { $unset: ['_id', NGRAMS, ...sort.map((_, i) => nullFlag(i))] }], { allowDiskUse: true, ...inSession }).toArray();
  }
  const read = (f: Document, from: number, n: number) => col.find(f, { projection: HIDDEN, ...inSession }).sort(order).skip(from).limit(n).toArray();
  if (!sort.length || !nullsOtherSide(sort[0])) return read(filter, skip, limit);
  const field = fieldName(sort[0].field);
  const present = { $and: [filter, { [field]: { $ne: null } }] };
  const absent = { $and: [filter, { [field]: null }] };
  const [first, second] = wantsNullsFirst(sort[0]) ? [absent, present] : [present, absent];
  const head = await read(first, skip, limit);
  if (limit && head.length === limit) return head;
  // The first part's size: known when this page reached into it, else counted.
  const firstSize = head.length ? skip + head.length : await col.countDocuments(first, session ? { session } : undefined);
  const tail = await read(second, Math.max(0, skip - firstSize), limit ? limit - head.length : 0);
  return [...head, ...tail];
}

async function sumsOf(col: Collection<Document & { _id: string }>, filter: Document, sums: string[], session?: ClientSession): Promise<Document> {
  const group: Document = { _id: null };
  sums.forEach((f, i) => (group[`s${i}`] = { $sum: `$${fieldName(f)}` }));
  const [r] = await col.aggregate([{ $match: filter }, { $group: group }], session ? { session } : undefined).toArray();
  return r ?? {};
}

const wantsNullsFirst = (s: SortKey) => s.nulls === 'first';
/** MongoDB puts nulls first ascending and last descending. */
const nullsOtherSide = (s: SortKey) => wantsNullsFirst(s) !== (s.dir === 'asc');

/** The sort as MongoDB reads it; `_id` ends it so that pages do not overlap when keys tie. */
function mongoOrder(sort: SortKey[]): Record<string, 1 | -1> {
  const order: Record<string, 1 | -1> = {};
  for (const s of sort) order[fieldName(s.field)] = s.dir === 'asc' ? 1 : -1;
  order._id = 1;
  return order;
}

const nullFlag = (i: number) => `__null${i}`;

/**
 * The aggregation's sort, for a sort pageOf cannot split: each key gets a flag (1 = null or
 * missing) sorted before it. `_id` ends every sort so that pages do not overlap when keys tie.
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
export function compileFilter(f: Filter, searchFields?: string[]): Document {
  const compile = (g: Filter) => compileFilter(g, searchFields);
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
      return f.filters.length ? { $and: f.filters.map(compile) } : {};
    case 'or':
      return f.filters.length ? { $or: f.filters.map(compile) } : MATCH_NONE;
    case 'contains': {
      if (f.text === '') return {};
      if (f.fields.length === 0) return MATCH_NONE;
      const one = (field: string) => containsField(fieldName(field), f.text, !searchFields || searchFields.includes(field));
      return f.fields.length === 1 ? one(f.fields[0]) : { $or: f.fields.map(one) };
    }
  }
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
