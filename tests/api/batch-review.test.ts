import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failingAppends } from '../support/failing-appends.js';
import { startTestApp, type TestApp } from '../support/app.js';

/**
 * decisions.md §14, as the review of 2026-11 found it broken: each item is "validated, decided and
 * written exactly as the single create would ... in item order", its result is "the single
 * create's answer body", and "a 5xx for the whole batch means nothing past the last committed
 * item was written".
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

describe('a batch that answers 5xx part-way', () => {
  it('writes nothing past the item whose append failed, and its retry writes the rest in item order', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    // The 5th constituent append fails, once.
    const log = failingAppends(t, [5]);
    const items = Array.from({ length: 8 }, (_, i) => ({ LastName: `r${i}` }));
    const headers = { 'idempotency-key': 'review-resume' };
    try {
      const failed = await api.post('/constituents/batch', { items }, { headers });
      expect(failed.status).toBe(500);
      // What the log holds of the team (a 5xx promises no read-your-writes: not the read models).
      const created = async () => (await log.readTeam!(team.id, null, 1000)).filter((e) => e.type === 'ConstituentCreated');
      expect((await created()).map((e: any) => e.data.fields.LastName)).toEqual(['r0', 'r1', 'r2', 'r3']);
      const retried = await api.post('/constituents/batch', { items }, { headers });
      expect(retried.status, retried.raw).toBe(200);
      expect(retried.body.results.map((x: any) => x.constituent.LastName)).toEqual(items.map((b) => b.LastName));
      const ids = retried.body.results.map((x: any) => x.constituent.PkConstituent);
      expect(ids).toEqual([...ids].sort((a: number, b: number) => a - b));
      expect((await created()).map((e: any) => e.data.fields.LastName)).toEqual(items.map((b) => b.LastName));
    } finally {
      t.runtime.services.log = log;
    }
  });
});

describe('a batch whose item loses a race on its record, then fails (after the review of 8937145)', () => {
  it('writes nothing past that item: the next item waits for it to end, and goes only if it ended well', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    const a = await api.post('/constituents', { LastName: 'A', Email1: 'a@example.org' });
    const d = await api.post('/constituents', { LastName: 'D', Email1: 'd@example.org' });
    expect([a.status, d.status]).toEqual([201, 201]);
    const dId = d.body.constituent.PkConstituent;
    // Constituent appends: #1 item 0, #2 item 1 (read before item 0 committed: it conflicts),
    // #3 item 2 (held behind item 1), #4 item 1 again: fails.
    const log = failingAppends(t, [4]);
    try {
      const items = [
        { Email1: 'a@example.org', LastName: 'X' },
        { Email1: 'a@example.org', LastName: 'Y' },
        { Email1: 'd@example.org', LastName: 'Z' },
      ];
      const r = await api.post('/constituents/batch?mode=upsert&matchOn=email', { items });
      expect(r.status).toBe(500);
      const events = await log.readTeam!(team.id, null, 1000);
      const dUpdates = events.filter((e) => e.stream === `constituent-${dId}` && e.type === 'ConstituentUpdated');
      expect(dUpdates.map((e: any) => e.data.changes.LastName)).toEqual([]);
    } finally {
      t.runtime.services.log = log;
    }
  });
});
