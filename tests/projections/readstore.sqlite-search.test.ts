import { describe, expect, it } from 'vitest';
import { MemoryReadStore } from '../support/memory-store/memory.js';
import { and, type CollectionDef, type Doc, eq, type Query, searchFilter } from '../../projections/store/port.js';
import { SqliteReadCore } from '../../projections/store/sqlite-core.js';

/**
 * The trigram search of a big team (issue 13): counted without the team marker when few rows
 * lie outside the team, and its page found by walking the team's list rather than gathering
 * every hit. Each answer is checked against the memory store, and the statements run show
 * which way it went.
 */
const def: CollectionDef = { name: 'people', idField: 'Pk', indexes: [['Team']], search: [{ fields: ['Name'], where: ['Team'] }] };
const TEAM = 12_000;

/** Every third row of team 1 is "common"; its last 3,500 rows alone are "zebra" (hits gathered at the end). */
function people(): Doc[] {
  const docs: Doc[] = [];
  for (let i = 1; i <= TEAM; i++) docs.push({ Pk: i, Team: 1, Name: `${i % 3 === 0 ? 'Common' : 'Plain'} ${i > TEAM - 3_500 ? 'Zebra' : 'Yak'} ${i}` });
  // Outside team 1 and holding its needles: another team, a team spelled as text, none.
  for (let i = 1; i <= 8; i++) docs.push({ Pk: TEAM + i, Team: 2, Name: `Common Zebra ${i}` });
  docs.push({ Pk: TEAM + 20, Team: '1', Name: 'Common Zebra text team' });
  docs.push({ Pk: TEAM + 21, Team: null, Name: 'Common Zebra no team' });
  return docs;
}

async function stores() {
  const sqlite = new SqliteReadCore(':memory:');
  const memory = new MemoryReadStore();
  sqlite.define(def);
  await memory.defineCollection(def);
  sqlite.transaction(() => {
    for (const d of people()) sqlite.put('people', d);
  });
  for (const d of people()) await memory.put('people', d);
  return { sqlite, memory };
}

/** The statements a find runs, with the values bound to them. */
function spy(core: SqliteReadCore): Array<{ sql: string; params: unknown[] }> {
  const ran: Array<{ sql: string; params: unknown[] }> = [];
  const prepare = core.db.prepare.bind(core.db);
  core.db.prepare = ((sql: string) => {
    const s = prepare(sql);
    for (const m of ['get', 'all'] as const) {
      const run = s[m].bind(s) as (...a: unknown[]) => unknown;
      (s as unknown as Record<string, unknown>)[m] = (...params: unknown[]) => (ran.push({ sql, params }), run(...params));
    }
    return s;
  }) as typeof core.db.prepare;
  return ran;
}

const query = (team: unknown, text: string, page = 1, dir: 'asc' | 'desc' = 'asc'): Query => ({
  collection: 'people',
  filter: and(eq('Team', team as number), searchFilter(text, ['Name'], 'Pk')),
  sort: [{ field: 'Pk', dir }],
  page: { page, pageSize: 50 },
});

describe('a trigram search of a big team', () => {
  it('answers each team exactly, pages and totals, with rows of other teams (and of none) holding the needle', async () => {
    const { sqlite, memory } = await stores();
    const cases: Array<[unknown, string, number, 'asc' | 'desc']> = [];
    for (const text of ['common', 'MMO', 'zebra', 'yak', 'plain', 'zebra 119', 'text', '1200', '12000', '4000', 'nothing'])
      for (const team of [1, 2, '1'])
        for (const page of [1, 2, 31, 100]) cases.push([team, text, page, 'asc']);
    for (const text of ['common', 'zebra', 'yak']) for (const page of [1, 20]) cases.push([1, text, page, 'desc']);
    for (const [team, text, page, dir] of cases) {
      const q = query(team, text, page, dir);
      const [a, b] = [sqlite.find(q), await memory.find(q)];
      expect({ team, text, page, dir, ids: a.items.map((d) => d.Pk), total: a.total }).toEqual({ team, text, page, dir, ids: b.items.map((d) => d.Pk), total: b.total });
    }
    sqlite.close();
  });

  it('counts the needle without the team marker and finds the page by walking the team, never gathering the hits', async () => {
    const { sqlite, memory } = await stores();
    const ran = spy(sqlite);
    const found = sqlite.find(query(1, 'common'));
    expect(found.total).toBe((await memory.find(query(1, 'common'))).total);
    expect(found.items.map((d) => d.Pk)).toEqual(Array.from({ length: 50 }, (_, i) => 3 * (i + 1)));
    const matches = ran.filter((r) => /\bMATCH\b/.test(r.sql));
    expect(matches.map((r) => r.params)).toEqual([['"common"']]);
    expect(ran.some((r) => /INDEXED BY "people__scan0".*instr/.test(r.sql))).toBe(true);
    sqlite.close();
  });

  it('gives the walk up when the hits gather at the end of the list, and finds the page from the hits', async () => {
    const { sqlite, memory } = await stores();
    const ran = spy(sqlite);
    const found = sqlite.find(query(1, 'zebra'));
    expect(found.items.map((d) => d.Pk)).toEqual((await memory.find(query(1, 'zebra'))).items.map((d) => d.Pk));
    expect(found.items[0].Pk).toBe(TEAM - 3_500 + 1);
    const walk = ran.findIndex((r) => /INDEXED BY "people__scan0".*instr/.test(r.sql));
    const byHits = ran.findIndex((r) => /rowid IN \(SELECT rowid FROM "people__fts0"/.test(r.sql));
    expect(walk).toBeGreaterThanOrEqual(0);
    expect(byHits).toBeGreaterThan(walk);
    sqlite.close();
  });

  it('keeps the team marker when many rows lie outside the team', async () => {
    const { sqlite, memory } = await stores();
    const ran = spy(sqlite);
    const found = sqlite.find(query(2, 'common'));
    expect(found.total).toBe((await memory.find(query(2, 'common'))).total);
    expect(found.total).toBe(8);
    expect(ran.some((r) => /\bMATCH\b/.test(r.sql) && String(r.params[0]).startsWith('^'))).toBe(true);
    sqlite.close();
  });
});
