import { type Db, type Document, MongoServerError } from 'mongodb';

/**
 * A scripted MongoDB database that keeps its documents in memory and evaluates the narrow part of
 * the query language the read store sends ($eq, $ne, $in, $gte, $lte, $exists, $and, $or; sort,
 * skip, limit, projection by exclusion; replaceOne, updateOne with $set/$setOnInsert and upsert (refused with
 * the server's duplicate-key error where the filter misses a document whose `_id` exists),
 * updateMany and bulkWrite's updateOne with $set, deleteOne, countDocuments; listCollections),
 * recording every call with its collection. No server runs here: the container suites run the
 * same store against a real one.
 */
export function scriptedMongo() {
  const collections = new Map<string, Map<string, Document>>();
  const calls: Array<{ collection: string; op: string; args: unknown[] }> = [];
  const docsOf = (name: string) => {
    let docs = collections.get(name);
    if (!docs) collections.set(name, (docs = new Map()));
    return docs;
  };
  const collection = (name: string) => {
    const docs = docsOf(name);
    const record = (op: string, args: unknown[]) => calls.push({ collection: name, op, args });
    const matching = (filter: Document) => [...docs.values()].filter((d) => matches(d, filter));
    return {
      createIndexes: async (...args: unknown[]) => void record('createIndexes', args),
      createIndex: async (...args: unknown[]) => void record('createIndex', args),
      find(filter: Document, options?: Document) {
        const call = { sort: undefined as Document | undefined, skip: 0, limit: 0 };
        record('find', [filter, options, call]);
        const run = () => {
          let out = matching(filter);
          if (call.sort) out = out.sort(comparing(call.sort));
          out = out.slice(call.skip, call.limit ? call.skip + call.limit : undefined);
          return out.map((d) => project(d, options?.projection));
        };
        const cursor = {
          sort: (s: Document) => ((call.sort = s), cursor),
          skip: (n: number) => ((call.skip = n), cursor),
          limit: (n: number) => ((call.limit = n), cursor),
          toArray: async () => run(),
          async *[Symbol.asyncIterator]() {
            yield* run();
          },
        };
        return cursor;
      },
      findOne: async (filter: Document) => (record('findOne', [filter]), structuredClone(matching(filter)[0] ?? null)),
      countDocuments: async (filter: Document) => (record('countDocuments', [filter]), matching(filter).length),
      replaceOne: async (filter: Document, doc: Document, options?: Document) => {
        record('replaceOne', [filter, doc, options]);
        const [old] = matching(filter);
        if (old || options?.upsert) docs.set(String(doc._id ?? old?._id), structuredClone(doc));
      },
      updateOne: async (filter: Document, update: Document, options?: Document) => {
        record('updateOne', [filter, update, options]);
        const [old] = matching(filter);
        if (old) {
          Object.assign(old, structuredClone(update.$set ?? {}));
          return { matchedCount: 1, upsertedCount: 0 };
        }
        if (!options?.upsert) return { matchedCount: 0, upsertedCount: 0 };
        // The filter's equalities go into the new document, not its operators ($in of two values, say).
        const equal = Object.fromEntries(Object.entries(filter).filter(([k, v]) => !k.startsWith('$') && !(v !== null && typeof v === 'object' && Object.keys(v).some((o) => o.startsWith('$')))));
        const doc = { ...structuredClone(equal), ...structuredClone(update.$setOnInsert ?? {}), ...structuredClone(update.$set ?? {}) };
        // The server's answer where the filter missed a document whose `_id` exists: the unique index refuses the insert
        // (manual, db.collection.updateOne, "Upsert with Unique Index").
        if (docs.has(String(doc._id))) throw new MongoServerError({ message: `E11000 duplicate key error collection: ${name} index: _id_ dup key: { _id: "${String(doc._id)}" }`, code: 11000 });
        docs.set(String(doc._id), doc);
        return { matchedCount: 0, upsertedCount: 1 };
      },
      updateMany: async (filter: Document, update: Document) => {
        record('updateMany', [filter, update]);
        for (const old of matching(filter)) Object.assign(old, structuredClone(update.$set ?? {}));
      },
      /** updateOne operations with $set only: what the read store's updateWhere sends. */
      bulkWrite: async (ops: Array<{ updateOne: { filter: Document; update: Document } }>) => {
        record('bulkWrite', [ops]);
        for (const { updateOne } of ops) {
          const [old] = matching(updateOne.filter);
          if (old) Object.assign(old, structuredClone(updateOne.update.$set ?? {}));
        }
      },
      deleteOne: async (filter: Document) => {
        record('deleteOne', [filter]);
        const [old] = matching(filter);
        if (old) docs.delete(String(old._id));
      },
    };
  };
  const listCollections = () => ({ toArray: async () => [...collections.keys()].map((name) => ({ name, type: 'collection' })) });
  const db = { collection, listCollections, command: async () => ({ isWritablePrimary: true }) } as unknown as Db;
  return { db, calls, documents: (name: string) => [...docsOf(name).values()] };
}

function matches(doc: Document, filter: Document): boolean {
  return Object.entries(filter).every(([key, cond]) => {
    if (key === '$and') return (cond as Document[]).every((f) => matches(doc, f));
    if (key === '$or') return (cond as Document[]).some((f) => matches(doc, f));
    const v = doc[key] ?? null;
    if (cond === null || typeof cond !== 'object' || Array.isArray(cond)) return v === (cond ?? null);
    return Object.entries(cond as Document).every(([op, x]) => {
      switch (op) {
        case '$eq':
          return v === (x ?? null);
        case '$ne':
          return v !== (x ?? null);
        case '$in':
          return (x as unknown[]).includes(v);
        case '$gte':
          return v !== null && typeof v === typeof x && v >= x;
        case '$lte':
          return v !== null && typeof v === typeof x && v <= x;
        case '$exists':
          return (key in doc) === x;
        default:
          throw new Error(`the scripted MongoDB does not evaluate ${op}`);
      }
    });
  });
}

function comparing(sort: Document): (a: Document, b: Document) => number {
  return (a, b) => {
    for (const [field, dir] of Object.entries(sort)) {
      const x = a[field] ?? null;
      const y = b[field] ?? null;
      if (x === y) continue;
      // Null first ascending, as MongoDB sorts it.
      const c = x === null ? -1 : y === null ? 1 : x < y ? -1 : 1;
      return c * (dir as number);
    }
    return 0;
  };
}

function project(doc: Document, projection: Document | undefined): Document {
  const out = structuredClone(doc);
  for (const [field, keep] of Object.entries(projection ?? {})) if (!keep) delete out[field];
  return out;
}
