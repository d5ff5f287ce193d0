import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryReadStore } from '../support/memory-store/memory.js';
import { and, type CollectionDef, type Doc, eq, type Query, searchFilter } from '../../projections/store/port.js';
import { SqliteReadCore } from '../../projections/store/sqlite-core.js';
import { GramCounter, isGrammable } from '../../projections/store/sqlite-grams.js';
import { markerOf } from '../../projections/store/sqlite-schema.js';

/**
 * Short searches (1-2 characters) take their totals from the gram table (issue 13): one row per
 * team and string instead of a read of the team's whole slice. The table must follow the rows
 * exactly through writes, syncs, bulk loads and crashes; each answer is checked against the
 * memory store, and the table kept row by row against one counted afresh.
 */
const FIELDS = ['Name', 'Email'];
const def: CollectionDef = { name: 'people', idField: 'Pk', indexes: [['Team']], search: [{ fields: FIELDS, where: ['Team'] }] };

const query = (team: unknown, text: string, page = 1, pageSize = 5): Query => ({
  collection: 'people',
  filter: and(eq('Team', team as number), searchFilter(text, FIELDS, 'Pk')),
  sort: [{ field: 'Pk', dir: 'asc' }],
  page: { page, pageSize },
});

/** Runs `fn` with the path of a database file in a temporary directory, removed afterwards. */
function withFile(fn: (file: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'turnout-grams-'));
  try {
    fn(join(dir, 'readmodels.sqlite'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A store on `file` holding ten rows of team 1 named Ann, synced. */
function tenAnns(file: string): SqliteReadCore {
  const core = new SqliteReadCore(file);
  core.define(def);
  for (let i = 1; i <= 10; i++) core.put('people', { Pk: i, Team: 1, Name: 'Ann', Email: null });
  core.syncSearch();
  return core;
}

/** The gram table's rows, in order. */
const grams = (core: SqliteReadCore) => core.db.prepare('SELECT m, g, n FROM people__grams0 ORDER BY m, g').raw().all();

/** Counted afresh: the collection through a bulk load's end, which counts every row again. */
function recounted(core: SqliteReadCore): unknown[] {
  core.beginBulk(['people']);
  core.endBulk(['people']);
  return grams(core);
}

/** The statements a find runs. */
function spy(core: SqliteReadCore): string[] {
  const ran: string[] = [];
  const prepare = core.db.prepare.bind(core.db);
  core.db.prepare = ((sql: string) => (ran.push(sql), prepare(sql))) as typeof core.db.prepare;
  return ran;
}

describe('the gram counter', () => {
  const counted = (texts: Array<[string, 1 | -1]>) => {
    const out = new Map<string, number>();
    const counter = new GramCounter(3, (m, g, n) => out.set(`${m.length}:${g}`, (out.get(`${m.length}:${g}`) ?? 0) + n));
    for (const [t, sign] of texts) counter.add(t, sign);
    counter.flush();
    return Object.fromEntries([...out].filter(([, n]) => n !== 0));
  };
  const team = markerOf([7])!;

  it('counts each string once per row, never across fields or through the marker, and characters beyond ASCII as characters', () => {
    expect(counted([[`${team}anan\u0001na`, 1]])).toEqual({ '3:a': 1, '3:n': 1, '3:an': 1, '3:na': 1 });
    expect(counted([[`${team}é😀x\u0001ñ`, 1]])).toEqual({ '3:é': 1, '3:😀': 1, '3:x': 1, '3:é😀': 1, '3:😀x': 1, '3:ñ': 1 });
    expect(counted([[`${team}ab`, 1], [`${team}ab`, -1], [`${team}b`, 1]])).toEqual({ '3:b': 1 });
    // A row without a marker (a team that is not an integer) is no team's.
    expect(counted([['abc', 1]])).toEqual({});
  });

  it('finds in every text exactly the one- and two-character substrings a search would match', () => {
    const chars = fc.constantFrom('a', 'b', 'A', 'é', 'ß', '😀', '\u0001', ' ', '1', '%', '\ue001');
    fc.assert(
      fc.property(fc.array(fc.array(chars, { maxLength: 8 }).map((a) => a.join('').toLowerCase()), { minLength: 1, maxLength: 6 }), (fields) => {
        const text = `${team}${fields.join('\u0001')}`;
        const found = new Set(Object.keys(counted([[text, 1]])).map((k) => k.slice(2)));
        const expected = new Set<string>();
        for (const f of fields) {
          const cs = [...f];
          for (let i = 0; i < cs.length; i++) for (const n of [1, 2]) if (i + n <= cs.length) expected.add(cs.slice(i, i + n).join(''));
        }
        for (const g of [...expected]) if (!isGrammable(g)) expected.delete(g);
        expect([...found].sort()).toEqual([...expected].sort());
      }),
      { numRuns: 300 },
    );
  });
});

describe('a short search counted from the gram table', () => {
  it('answers as the memory store does through puts, team moves, removals, syncs and bulk loads, and its table stays what a recount gives', async () => {
    const names = ['Ann', 'Anna Lee', 'Bo', 'Zoë', 'ÁLVARO', 'straße', 'Dan "Q"', '12', 'x%y', ''];
    const op = fc.oneof(
      fc.record({ kind: fc.constant('put' as const), pk: fc.integer({ min: 1, max: 30 }), team: fc.constantFrom(1, 2, '1', null), name: fc.constantFrom(...names), email: fc.constantFrom(null, 'an@x.org', 'B@Y.ORG') }),
      fc.record({ kind: fc.constant('remove' as const), pk: fc.integer({ min: 1, max: 30 }) }),
      fc.record({ kind: fc.constant('sync' as const) }),
      fc.record({ kind: fc.constant('bulk' as const) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
        const core = new SqliteReadCore(':memory:');
        const memory = new MemoryReadStore();
        core.define(def);
        await memory.defineCollection(def);
        for (const o of ops) {
          if (o.kind === 'put') {
            const doc: Doc = { Pk: o.pk, Team: o.team, Name: o.name, Email: o.email };
            core.put('people', doc);
            await memory.put('people', doc);
          } else if (o.kind === 'remove') {
            core.remove('people', o.pk);
            await memory.remove('people', o.pk);
          } else if (o.kind === 'sync') core.syncSearch();
          // A bulk load begins, or ends: the searches below may run in the middle of one.
          else if (core.inBulk('people')) core.endBulk(['people']);
          else core.beginBulk(['people']);
        }
        for (const text of ['a', 'an', 'N', 'ë', 'ß', 'ss', '1', '12', '2', '%', '"', ' ', 'x', 'zz']) {
          for (const team of [1, 2]) {
            for (const page of [1, 2]) {
              const [a, b] = [core.find(query(team, text, page)), await memory.find(query(team, text, page))];
              expect({ text, team, page, ids: a.items.map((d) => d.Pk), total: a.total }).toEqual({ text, team, page, ids: b.items.map((d) => d.Pk), total: b.total });
            }
          }
        }
        if (core.inBulk('people')) core.endBulk(['people']);
        core.syncSearch();
        const kept = grams(core);
        expect(kept).toEqual(recounted(core));
        core.close();
      }),
      { numRuns: 60 },
    );
  });

  it('reads the count from one row of the table and stops the page at the last hit, never walking the rest of the team', () => {
    const core = new SqliteReadCore(':memory:');
    core.define(def);
    core.transaction(() => {
      for (let i = 1; i <= 5_000; i++) core.put('people', { Pk: i, Team: 1, Name: i === 3 || i === 7 ? 'Qz' : 'Plain', Email: null });
    });
    core.syncSearch();
    const ran = spy(core);
    const found = core.find(query(1, 'qz', 1, 50));
    expect(found.total).toBe(2);
    expect(found.items.map((d) => d.Pk)).toEqual([3, 7]);
    expect(ran.some((sql) => /FROM "people__grams0" WHERE m = \? AND g = \?/.test(sql))).toBe(true);
    expect(ran.filter((sql) => /count\(\*\)/.test(sql) && /people__scan0/.test(sql))).toEqual([]);
    // The page asked for the two hits the total allows: its walk ended at the seventh row.
    expect(ran.some((sql) => /INDEXED BY "people__scan0".*LIMIT \? OFFSET \?/.test(sql))).toBe(true);
    // Nothing to find: no walk at all.
    ran.length = 0;
    expect(core.find(query(1, 'wq')).total).toBe(0);
    expect(ran.filter((sql) => /people__scan0/.test(sql))).toEqual([]);
    core.close();
  });

  it('counts from the rows while a bulk load is under way (its indexes wait for its end), and from the table again once it is built', () => {
    const core = new SqliteReadCore(':memory:');
    core.define(def);
    for (let i = 1; i <= 20; i++) core.put('people', { Pk: i, Team: 1, Name: i % 2 ? 'Ann' : 'Bo', Email: null });
    core.syncSearch();
    core.beginBulk(['people']);
    for (let i = 21; i <= 30; i++) core.put('people', { Pk: i, Team: 1, Name: 'Ann', Email: null });
    expect(core.find(query(1, 'an')).total).toBe(20);
    expect(core.find(query(1, 'ann')).total).toBe(20);
    core.endBulk(['people']);
    expect(core.find(query(1, 'an')).total).toBe(20);
    expect(grams(core)).toContainEqual([markerOf([1]), 'an', 20]);
    core.close();
  });

  it('reads one snapshot: a sync committed by another connection in the middle of a search changes nothing in its answer', () =>
    withFile((file) => {
      const writer = tenAnns(file);
      // Waiting for the sync: one more row holding "an" (short search) and "ann" (trigram search).
      writer.put('people', { Pk: 11, Team: 1, Name: 'Anna', Email: null });
      const reader = new SqliteReadCore(file, { laidOutElsewhere: true });
      reader.define(def);
      // The writer's sync commits right after the reader's first read of a search table.
      const prepare = reader.db.prepare.bind(reader.db);
      let synced = false;
      reader.db.prepare = ((sql: string) => {
        const stmt = prepare(sql);
        if (!/people__(grams|fts)0/.test(sql) || /pending/.test(sql)) return stmt;
        for (const m of ['get', 'all'] as const) {
          const run = stmt[m].bind(stmt) as (...a: unknown[]) => unknown;
          (stmt as unknown as Record<string, unknown>)[m] = (...params: unknown[]) => {
            const out = run(...params);
            if (!synced) (synced = true), writer.syncSearch();
            return out;
          };
        }
        return stmt;
      }) as typeof reader.db.prepare;
      expect(reader.find(query(1, 'an', 1, 50)).total).toBe(11);
      expect(synced).toBe(true);
      writer.put('people', { Pk: 12, Team: 1, Name: 'Hannah', Email: null });
      synced = false;
      expect(reader.find(query(1, 'ann', 1, 50)).total).toBe(12);
      expect(synced).toBe(true);
      reader.close();
      writer.close();
    }));
});
