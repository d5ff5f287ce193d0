import { MongoServerError } from 'mongodb';
import type { LeaseCollection, LeaseDoc } from '../../projections/lease-mongo.js';

type Query = Record<string, unknown>;

/**
 * The lease collection as the MongoDB server treats the calls MongoLease makes, for machines
 * without a server. It holds the server's rules that matter to a lease:
 * - `$expr` in the query of an upsert is refused with error 224 ("$expr is not allowed in the
 *   query predicate for an upsert"; MongoDB manual, $expr "Behavior", documented under DOCS-14158:
 *   https://jira.mongodb.org/browse/DOCS-14158);
 * - an upsert whose filter matches nothing inserts, and an existing `_id` refuses that insert with
 *   a duplicate-key error, code 11000 (manual, db.collection.updateOne "Upsert with Unique Index").
 * Each call runs whole, in one turn of the event loop, as a single-document write is atomic.
 */
export function scriptedLeaseCollection(): LeaseCollection & { docs: Map<string, LeaseDoc> } {
  const docs = new Map<string, LeaseDoc>();
  const collection = {
    docs,
    async updateOne(filter: Query, update: unknown, options: { upsert?: boolean } = {}) {
      if (options.upsert && mentionsExpr(filter)) throw new MongoServerError({ message: '$expr is not allowed in the query predicate for an upsert', code: 224 });
      if (Array.isArray(update) || !isSetOnly(update)) throw new Error('the scripted collection takes only {$set: {...}} updates');
      const set = (update as { $set: Partial<LeaseDoc> }).$set;
      const id = filter._id as string;
      const doc = docs.get(id);
      if (doc && matches(doc, filter)) {
        docs.set(id, { ...doc, ...set });
        return { acknowledged: true, matchedCount: 1, modifiedCount: 1, upsertedCount: 0, upsertedId: null };
      }
      if (!options.upsert) return { acknowledged: true, matchedCount: 0, modifiedCount: 0, upsertedCount: 0, upsertedId: null };
      if (doc) throw new MongoServerError({ message: `E11000 duplicate key error collection: turnout._leases index: _id_ dup key: { _id: "${id}" }`, code: 11000 });
      docs.set(id, { _id: id, ...set } as LeaseDoc);
      return { acknowledged: true, matchedCount: 0, modifiedCount: 0, upsertedCount: 1, upsertedId: id };
    },
    async deleteOne(filter: Query) {
      const doc = docs.get(filter._id as string);
      if (!doc || !matches(doc, filter)) return { acknowledged: true, deletedCount: 0 };
      docs.delete(doc._id);
      return { acknowledged: true, deletedCount: 1 };
    },
  };
  return collection as unknown as LeaseCollection & { docs: Map<string, LeaseDoc> };
}

function mentionsExpr(q: unknown): boolean {
  if (Array.isArray(q)) return q.some(mentionsExpr);
  if (!q || typeof q !== 'object' || q instanceof Date) return false;
  return Object.entries(q).some(([k, v]) => k === '$expr' || mentionsExpr(v));
}

const isSetOnly = (u: unknown) => typeof u === 'object' && u !== null && Object.keys(u).length === 1 && '$set' in u;

/** Equality, `$lt` on dates and `$or`: what a lease filter uses. */
function matches(doc: LeaseDoc, q: Query): boolean {
  return Object.entries(q).every(([k, v]) => {
    if (k === '$or') return (v as Query[]).some((alt) => matches(doc, alt));
    const actual = (doc as unknown as Record<string, unknown>)[k];
    if (v && typeof v === 'object' && !(v instanceof Date)) {
      const ops = Object.entries(v);
      return ops.every(([op, arg]) => {
        if (op === '$lt') return actual instanceof Date && actual < (arg as Date);
        throw new Error(`the scripted collection does not know ${op}`);
      });
    }
    return actual === v;
  });
}
