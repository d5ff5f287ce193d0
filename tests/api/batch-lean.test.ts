import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReadStore } from '../../projections/store/port.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { rawObjectsAt } from '../support/raw-json.js';

/**
 * decisions.md §14 at a batch's cost: a batch of plain creates answers each item with the record
 * its own events make (as the single create does), not read back, and waits for the read models
 * once, at its last item, while every item stays readable once it has answered.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const people = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ FirstName: 'Ada', LastName: `${tag}${i}`, Email1: `${tag}${i}@example.org` }));

describe('a batch of constituent creates', () => {
  it('reads no row back and waits for the read models once, yet every item is readable as answered', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    const services = t.runtime.services;
    const { store, settle } = services;
    const reads: string[] = [];
    let settles = 0;
    services.store = new Proxy(store, {
      get(target, prop) {
        const v = Reflect.get(target, prop);
        if (typeof v !== 'function') return v;
        if (prop === 'get' || prop === 'getJson') return (collection: string, ...rest: unknown[]) => (reads.push(collection), (v as (...a: unknown[]) => unknown).call(target, collection, ...rest));
        return v.bind(target);
      },
    }) as ReadStore;
    services.settle = (position, ctx) => {
      settles++;
      return settle(position, ctx);
    };
    let r;
    try {
      r = await api.post('/constituents/batch', { items: people(20, 'lean') });
    } finally {
      services.store = store;
      services.settle = settle;
    }
    expect(r.status, r.raw).toBe(200);
    expect(reads.filter((c) => c.startsWith('constituent'))).toEqual([]);
    expect(settles).toBe(1);
    // Each answer is the record a single read shows, byte for byte, and readable at once.
    const got = await Promise.all(r.body.results.map((x: any) => api.get(`/constituents/${x.constituent.PkConstituent}`)));
    const written = rawObjectsAt(r.raw, 'constituent');
    got.forEach((g, i) => {
      expect(g.status).toBe(200);
      expect(written[i]).toBe(rawObjectsAt(g.raw, 'constituent')[0]);
    });
  });

  it('keeps one wait per item for an upsert, whose item may need an earlier one readable', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    const r = await api.post('/constituents/batch?mode=upsert&matchOn=email', {
      items: [{ FirstName: 'A', LastName: 'One', Email1: 'same@example.org' }, { Email1: 'same@example.org', Nickname: 'Again' }, { FirstName: 'B', LastName: 'Two', Email1: 'b@example.org' }],
    });
    expect(r.status, r.raw).toBe(200);
    expect(r.body.results.map((x: any) => [x.status, x.created])).toEqual([[201, true], [200, false], [201, true]]);
    expect(r.body.results[1].constituent).toMatchObject({ PkConstituent: r.body.results[0].constituent.PkConstituent, Nickname: 'Again', LastName: 'One' });
  });
});
