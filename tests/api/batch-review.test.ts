import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

/**
 * decisions.md §14, as the review of 2026-11 found it broken: each item is "validated, decided and
 * written exactly as the single create would ... in item order", and its result is "the
 * single create's answer body".
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** A record as both answers show it, without what differs between two teams (ids, times). */
const comparable = ({ PkConstituent, FkTeam, DateCreated, DateLastModified, ...rest }: Record<string, unknown>) => rest;

describe('an upsert batch that touches one email three times', () => {
  it('answers each item with the record as that item left it, as three single upserts answer', async () => {
    const items = [
      { FirstName: 'Una', LastName: 'First', Email1: 'u@example.org' },
      { Email1: 'U@EXAMPLE.ORG', LastName: 'Second' },
      { Email1: 'u@example.org', LastName: 'Third', Nickname: 'Tri' },
    ];
    const batch = await (await t.team()).api.Integration.post('/constituents/batch?mode=upsert&matchOn=email', { items });
    expect(batch.status, batch.raw).toBe(200);
    const single = (await t.team()).api.Integration;
    const one: unknown[] = [];
    for (const b of items) {
      const s = await single.post('/constituents?mode=upsert&matchOn=email', b);
      one.push({ status: s.status, created: s.body.created, constituent: comparable(s.body.constituent) });
    }
    expect(one.map((o: any) => [o.status, o.constituent.LastName])).toEqual([[201, 'First'], [200, 'Second'], [200, 'Third']]);
    expect(batch.body.results.map((r: any) => ({ ...r, constituent: comparable(r.constituent) }))).toEqual(one);
    // One record, each answer naming it.
    expect(new Set(batch.body.results.map((r: any) => r.constituent.PkConstituent)).size).toBe(1);
  });
});
