import type { Db, Document } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { MongoReadStore } from '../../projections/store/mongo.js';
import { containsField, ngramsOf } from '../../projections/store/mongo-search.js';
import { eq } from '../../projections/store/port.js';
import { CONSTITUENTS, constituentsProjection } from '../../projections/constituents.js';
import { readTeamRecordTagged } from '../../projections/read.js';
import type { LoggedEvent } from '../../domain/events.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { revisionsOf } from '../../domain/shared/revision.js';

/**
 * The MongoDB read store driven through a scripted collection: each find answers from a queue of
 * results, and every call the store makes is recorded, so the tests can assert the shape of the
 * reads (no MongoDB server runs here; the container suite runs the same store for real).
 */
function scripted(finds: Document[][] = [], counts: number[] = []) {
  const calls: unknown[][] = [];
  const collection = {
    createIndexes: async (specs: unknown) => void calls.push(['createIndexes', specs]),
    find(filter: Document, options?: Document) {
      const call: unknown[] = ['find', filter, options];
      calls.push(call);
      const cursor = {
        sort: (s: unknown) => (call.push({ sort: s }), cursor),
        skip: (n: number) => (call.push({ skip: n }), cursor),
        limit: (n: number) => (call.push({ limit: n }), cursor),
        toArray: async () => finds.shift() ?? [],
        [Symbol.asyncIterator]: async function* () {},
      };
      return cursor;
    },
    countDocuments: async (filter: Document) => (calls.push(['countDocuments', filter]), counts.shift() ?? 0),
    aggregate: (pipeline: Document[]) => (calls.push(['aggregate', pipeline]), { toArray: async () => [{ _id: null, s0: 12.345 }] }),
    replaceOne: async (...args: unknown[]) => void calls.push(['replaceOne', ...args]),
  };
  const db = { collection: () => collection } as unknown as Db;
  return { store: new MongoReadStore(db), calls };
}

const people = { name: 'people', idField: 'Pk', indexes: [['Team'], ['Team', 'City']] };

describe('paging through MongoDB', () => {
  it('reads a page with find().sort().skip().limit() and counts with countDocuments, aggregating nothing', async () => {
    const { store, calls } = scripted([[{ Pk: 3 }]], [41]);
    await store.defineCollection(people);
    calls.length = 0;
    const page = await store.find({ collection: 'people', filter: eq('Team', 1), sort: [{ field: 'City', dir: 'desc' }], page: { page: 3, pageSize: 20 } });
    expect(page).toEqual({ items: [{ Pk: 3 }], total: 41, sums: {} });
    // A sort on the index's fields after the equality ones is served by the index, with no
    // in-memory SORT stage (docs: manual/tutorial/sort-results-with-indexes); $addFields before a
    // $sort is a computed value, which no index holds.
    expect(calls).toEqual([
      ['find', { Team: { $eq: 1 } }, { projection: { _id: 0, _ngrams: 0 } }, { sort: { City: -1, _id: 1 } }, { skip: 40 }, { limit: 20 }],
      ['countDocuments', { Team: { $eq: 1 } }],
    ]);
  });

  it('puts nulls last ascending by reading the non-null documents first, then the null ones, from where the page reaches', async () => {
    // Page 2 of 10: 3 non-null documents remain on it, then 7 null ones from the start.
    const { store, calls } = scripted([[{ Pk: 1 }, { Pk: 2 }, { Pk: 3 }], [{ Pk: 4 }]], [14]);
    await store.defineCollection(people);
    calls.length = 0;
    const page = await store.find({ collection: 'people', filter: eq('Team', 1), sort: [{ field: 'City', dir: 'asc' }], page: { page: 2, pageSize: 10 } });
    expect(page.items.map((d) => d.Pk)).toEqual([1, 2, 3, 4]);
    const present = { $and: [{ Team: { $eq: 1 } }, { City: { $ne: null } }] };
    const absent = { $and: [{ Team: { $eq: 1 } }, { City: null }] };
    const finds = calls.filter((c) => c[0] === 'find');
    expect(finds).toEqual([
      ['find', present, expect.anything(), { sort: { City: 1, _id: 1 } }, { skip: 10 }, { limit: 10 }],
      ['find', absent, expect.anything(), { sort: { City: 1, _id: 1 } }, { skip: 0 }, { limit: 7 }],
    ]);
  });

  it('counts the non-null part only when the page starts past it', async () => {
    const { store, calls } = scripted([[], [{ Pk: 9 }]], [14, 25]);
    await store.defineCollection(people);
    calls.length = 0;
    await store.find({ collection: 'people', sort: [{ field: 'City', dir: 'asc' }], page: { page: 4, pageSize: 10 } });
    const present = { $and: [{}, { City: { $ne: null } }] };
    expect(calls.filter((c) => c[0] === 'countDocuments')).toEqual(expect.arrayContaining([['countDocuments', present]]));
    expect(calls.filter((c) => c[0] === 'find').at(-1)).toEqual(['find', { $and: [{}, { City: null }] }, expect.anything(), { sort: { City: 1, _id: 1 } }, { skip: 5 }, { limit: 10 }]);
  });

  it('sums with one $group over the filter, only when asked', async () => {
    const { store, calls } = scripted([[]], [0]);
    await store.defineCollection(people);
    calls.length = 0;
    const r = await store.find({ collection: 'people', filter: eq('Team', 1), sort: [{ field: 'Pk', dir: 'desc' }], sums: ['Amount'] });
    expect(r.sums).toEqual({ Amount: 12.35 });
    expect(calls.filter((c) => c[0] === 'aggregate')).toEqual([['aggregate', [{ $match: { Team: { $eq: 1 } } }, { $group: { _id: null, s0: { $sum: '$Amount' } } }]]]);
  });
});

describe('substring search on MongoDB', () => {
  it('indexes every document\'s grams in a multikey index and stores them with the document', async () => {
    const { store, calls } = scripted();
    await store.defineCollection(people);
    // docs: manual/core/indexes/index-types/index-multikey (one index key per array element).
    expect((calls.find((c) => c[0] === 'createIndexes')![1] as Array<{ key: Document }>).map((i) => i.key)).toContainEqual({ _ngrams: 1 });
    await store.put('people', { Pk: 1, Name: 'Ana', Team: 1 });
    const [, , doc] = calls.find((c) => c[0] === 'replaceOne')!;
    expect((doc as Document)._ngrams.sort()).toEqual(['Name:a\u0003\u0003', 'Name:ana', 'Name:na\u0003']);
  });

  it('finds candidates through the index for searches of every length, never missing a document the embedded store finds', () => {
    // What the index part of the filter admits, evaluated as MongoDB would on the gram array.
    const admits = (grams: string[], cond: Document) =>
      cond.$all ? (cond.$all as string[]).every((g) => grams.includes(g)) : grams.some((g) => new RegExp(cond.$regex as string).test(g));
    const texts = ['Ana Lima', 'Bruno (Bo) Sá', 'carla.axb', 'x', 'ÉVORA', 'ab', 'İstanbul', 'a.b.c.d'];
    for (const text of texts) {
      const grams = ngramsOf({ Name: text });
      const lower = text.toLowerCase();
      // Every substring, as the embedded store matches: the lowercased text contains the lowercased search.
      for (let i = 0; i < lower.length; i++)
        for (let j = i + 1; j <= lower.length; j++) {
          const search = lower.slice(i, j).toUpperCase();
          if (!lower.includes(search.toLowerCase())) continue;
          const [index] = containsField('Name', search, true).$and as Document[];
          expect(admits(grams, index._ngrams), `${search} in ${text}`).toBe(true);
        }
    }
  });

  it('uses $all of the trigrams for three or more characters, and an anchored prefix for one or two', () => {
    expect(containsField('City', 'LISB', true)).toEqual({
      $and: [{ _ngrams: { $all: ['City:lis', 'City:isb'] } }, { City: { $regex: 'LISB', $options: 'i' } }],
    });
    // An anchored, case-sensitive prefix reads one range of the index (docs: reference/operator/query/regex, "Index Use").
    expect(containsField('City', 'Li', true)).toEqual({ $and: [{ _ngrams: { $regex: '^City:li' } }, { City: { $regex: 'Li', $options: 'i' } }] });
    expect(containsField('City', '.', true)).toEqual({ $and: [{ _ngrams: { $regex: '^City:\\.' } }, { City: { $regex: '\\.', $options: 'i' } }] });
  });
});

describe('a record and its revision on MongoDB', () => {
  /** A collection that keeps what replaceOne writes and answers findOne from it, counting reads. */
  function kept() {
    const docs = new Map<string, Document>();
    let findOnes = 0;
    const collection = {
      createIndexes: async () => {},
      find: () => ({ [Symbol.asyncIterator]: async function* () {} }),
      findOne: async (filter: { _id: string }) => {
        findOnes++;
        const doc = docs.get(filter._id);
        return doc ? Object.fromEntries(Object.entries(doc).filter(([k]) => k !== '_id' && k !== '_ngrams')) : null;
      },
      replaceOne: async (filter: { _id: string }, doc: Document) => void docs.set(filter._id, doc),
    };
    const db = { collection: () => collection } as unknown as Db;
    return { store: new MongoReadStore(db), docs, reads: () => findOnes };
  }
  const logged = (revision: number, type: string, data: Record<string, unknown>, metadata: { correlationId: string; at: string; revision?: number }): RecordedEvent => ({
    type,
    data,
    stream: 'constituent-7',
    revision: BigInt(revision),
    position: { commit: BigInt(revision + 1), prepare: BigInt(revision + 1) },
    metadata: { team: 1, source: 'Application', keyName: null, ...metadata },
  });

  it('keeps the revision in the document the projector replaces, so one findOne reads body and ETag', async () => {
    const { store, docs, reads } = kept();
    for (const def of constituentsProjection.collections) await store.defineCollection(def);
    const events = [
      // Written before appends were stamped: one write per correlation id and time.
      logged(0, 'ConstituentCreated', { id: 7, fields: { LastName: 'Roe' } }, { correlationId: 'a', at: '2026-01-01T00:00:00.000Z' }),
      logged(1, 'ConstituentUpdated', { id: 7, changes: { FirstName: 'Ann' } }, { correlationId: 'b', at: '2026-01-02T00:00:00.000Z' }),
      logged(2, 'ConstituentUpdated', { id: 7, changes: { Nickname: 'An' } }, { correlationId: 'b', at: '2026-01-02T00:00:00.000Z' }),
      logged(3, 'ConstituentLocked', { id: 7 }, { correlationId: 'c', at: '2026-01-03T00:00:00.000Z', revision: 3 }),
    ];
    const seen: number[] = [];
    for (const e of events) {
      await constituentsProjection.apply(e as LoggedEvent<'constituent'>, store);
      seen.push(docs.get('7')!._revision as number);
    }
    expect(seen).toEqual(revisionsOf(events));
    expect(docs.get('7')).not.toHaveProperty('_write');
    const before = reads();
    const got = await readTeamRecordTagged(store, CONSTITUENTS, 'constituent', 1, 7);
    expect(reads() - before).toBe(1);
    expect(got.revision).toBe(3);
    expect(got.record).toMatchObject({ PkConstituent: 7, FirstName: 'Ann', Nickname: 'An' });
    expect(got.record).not.toHaveProperty('_revision');
  });

  it('answers no revision for a document written before read models kept one (the route then asks the log)', async () => {
    const { store, docs } = kept();
    for (const def of constituentsProjection.collections) await store.defineCollection(def);
    docs.set('8', { _id: '8', PkConstituent: 8, FkTeam: 1, _rev: 0 });
    expect((await readTeamRecordTagged(store, CONSTITUENTS, 'constituent', 1, 8)).revision).toBeNull();
  });
});
