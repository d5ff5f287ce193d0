import { describe, expect, it } from 'vitest';
import { MemoryReadStore } from '../support/memory-store/memory.js';
import { searchTextOf } from '../../projections/store/search-text.js';
import { and, type Doc, eq, type Filter, searchFilter } from '../../projections/store/port.js';

const FIELDS = ['Name', 'Email'];
const WORDS = ['ana', 'bob', 'Ánna', 'li', 'x.org', 'smith', 'Sánchez', 'o', '12', 'anna.b@x.org', '(b)'];

/** A tiny deterministic random source, so a failure can be replayed. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

describe('searching the memory store through its n-gram index', () => {
  it('finds exactly what a scan of every document finds, through puts, updates, removals and compactions', async () => {
    const store = new MemoryReadStore();
    await store.defineCollection({ name: 'people', idField: 'Pk', indexes: [['Team']] });
    const live = new Map<number, Doc>();
    const r = rng(7);
    const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
    const queries = ['an', 'AN', 'anna', 'x.org', 'sán', 'o', '12', '1', 'b)', 'zz', 'li', 'smith', 'a.b@'];
    const check = async () => {
      for (const q of queries)
        for (const team of [1, 2]) {
          const filter: Filter = and(eq('Team', team), searchFilter(q, FIELDS, 'Pk'));
          const got = await store.find({ collection: 'people', filter, sort: [{ field: 'Pk', dir: 'asc' }] });
          const want: number[] = [...live.values()]
            .filter((d) => d.Team === team && (searchTextOf(d, FIELDS).includes(q.toLowerCase()) || (/^\d+$/.test(q) && d.Pk === Number(q))))
            .map((d) => d.Pk as number)
            .sort((a, b) => a - b);
          expect(got.items.map((d) => d.Pk), `${q} in team ${team}`).toEqual(want);
          expect(got.total).toBe(want.length);
          // Fields the index does not keep: a sort, a sum and a conjunct that read the documents.
          const byName = await store.find({
            collection: 'people',
            filter: and(filter, { op: 'ne', field: 'Email', value: null }),
            sort: [{ field: 'Name', dir: 'desc' }, { field: 'Pk', dir: 'asc' }],
            sums: ['Pk'],
            page: { page: 2, pageSize: 3 },
          });
          const wantByName = [...live.values()]
            .filter((d) => want.includes(d.Pk as number) && d.Email !== null)
            .sort((a, b) => (a.Name === b.Name ? (a.Pk as number) - (b.Pk as number) : (a.Name as string) < (b.Name as string) ? 1 : -1));
          expect(byName.items.map((d) => d.Pk), `${q} by name`).toEqual(wantByName.slice(3, 6).map((d) => d.Pk));
          expect(byName.total).toBe(wantByName.length);
          expect(byName.sums.Pk).toBe(wantByName.reduce((n, d) => n + (d.Pk as number), 0));
        }
    };
    await check(); // the index is built on the first search, then kept up to date by writes
    for (let step = 0; step < 6_000; step++) {
      const id = 1 + Math.floor(r() * 400);
      if (r() < 0.2) {
        await store.remove('people', id);
        live.delete(id);
      } else {
        const doc = { Pk: id, Team: 1 + Math.floor(r() * 2), Name: `${pick(WORDS)} ${pick(WORDS)}`, Email: r() < 0.3 ? null : `${pick(WORDS)}${id}@x.org` };
        await store.put('people', doc);
        live.set(id, doc);
      }
      if (step % 500 === 0) await check();
    }
    await check();
  });

  it('answers an id search with the record even when its text does not contain the digits', async () => {
    const store = new MemoryReadStore();
    await store.defineCollection({ name: 'people', idField: 'Pk' });
    await store.put('people', { Pk: 42, Name: 'Ana', Email: null });
    await store.put('people', { Pk: 7, Name: 'Bo 42', Email: null });
    const got = await store.find({ collection: 'people', filter: searchFilter('42', FIELDS, 'Pk'), sort: [{ field: 'Pk', dir: 'asc' }] });
    expect(got.items.map((d) => d.Pk)).toEqual([7, 42]);
  });
});
