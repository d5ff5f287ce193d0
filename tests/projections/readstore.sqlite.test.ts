import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryReadStore } from '../support/memory-store/memory.js';
import { and, type CollectionDef, type Doc, eq, type Query, type ReadStore, searchFilter } from '../../projections/store/port.js';
import { SqliteReadCore } from '../../projections/store/sqlite-core.js';
import { SqliteReadStore } from '../../projections/store/sqlite.js';
import { readStoreContract } from './readstore.contract.js';

const dirs: string[] = [];
const tempFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'turnout-readstore-'));
  dirs.push(dir);
  return join(dir, 'readmodels.sqlite');
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

readStoreContract('SqliteReadStore (:memory:)', async () => {
  const store = new SqliteReadStore(':memory:');
  return { store, cleanup: () => store.close() };
});

readStoreContract('SqliteReadStore (file)', async () => {
  const store = new SqliteReadStore(tempFile());
  return { store, cleanup: () => store.close() };
});

/** The contract's collection with every field set it searches declared: the trigram and short-search paths then answer. */
function withSearches(store: SqliteReadStore): ReadStore {
  const declared = (def: CollectionDef): CollectionDef => ({
    ...def,
    search: [['City'], ['Name', 'Email'], ['Name'], ['Email', 'City']].map((fields) => ({ fields, where: ['Team'] })),
    sorts: [{ where: ['Team'], sort: [{ field: 'City', dir: 'asc' }, { field: 'Pk', dir: 'asc' }] }],
  });
  return Object.assign(Object.create(store) as ReadStore, { defineCollection: (def: CollectionDef) => store.defineCollection(declared(def)) });
}
readStoreContract('SqliteReadStore (declared searches and orders)', async () => {
  const store = new SqliteReadStore(':memory:');
  return { store: withSearches(store), cleanup: () => store.close() };
});

const FIELDS = ['Name', 'Email'];
const constituents: CollectionDef = {
  name: 'constituents',
  idField: 'Pk',
  indexes: [['Team'], ['Team', '_email']],
  search: [{ fields: FIELDS, where: ['Team'] }],
  sorts: [{ where: ['Team'], sort: [{ field: 'Start', dir: 'asc', nulls: 'last' }, { field: 'Pk', dir: 'asc' }] }],
};
const NAMES = ['Ana Sá', 'ÁLVARO Núñez', 'İlkay Straße', 'Bo "Q" 50%', 'under_score*star', 'carla.axb', 'Dora O\'Neil', 'Ann Annan', 'Søren Ånd'];
function person(i: number): Doc {
  const name = `${NAMES[i % NAMES.length]} ${i % 7 === 0 ? 'x' : ''}${i}`;
  return { Pk: i, Team: 1 + (i % 3 === 0 ? 1 : 0), Name: name, Email: i % 5 === 0 ? null : `p${i}@Ex.ORG`, _email: `p${i}@ex.org`, Start: i % 4 ? `2024-0${1 + (i % 9)}-01` : null };
}

describe('the SQLite read store, beyond the contract', () => {
  it('answers every search as the memory store does: non-ASCII case, literal % _ " *, 1 to 5 characters, pages and totals', async () => {
    const sqlite = new SqliteReadStore(':memory:');
    const memory = new MemoryReadStore();
    for (const s of [sqlite, memory]) {
      await s.defineCollection(constituents);
      for (let i = 1; i <= 300; i++) await s.put('constituents', person(i));
      await s.put('constituents', { ...person(40), Name: 'Changed Ñame' });
      await s.remove('constituents', 41);
    }
    const needles = ['a', 'Á', 'sá', 'SÁ', 'ñ', 'i̇l', 'İL', 'STRASSE', 'straße', 'ß', '%', '50%', '_s', '"q"', '*', 'r*s', 'x', 'x7', 'ann', 'ANNAN', 'ex.org', '@ex', 'o\'n', '1', '12', '123', '300', 'zzz', ' ', 'ña', '.ax', 'søren å'];
    for (const text of needles) {
      for (const [page, sort] of [
        [1, [{ field: 'Pk', dir: 'asc' }]],
        [2, [{ field: 'Pk', dir: 'asc' }]],
        [1, [{ field: 'Start', dir: 'asc', nulls: 'last' }, { field: 'Pk', dir: 'asc' }]],
      ] as const) {
        const q: Query = { collection: 'constituents', filter: and(eq('Team', 1), searchFilter(text, FIELDS, 'Pk')), sort: [...sort], page: { page, pageSize: 10 } };
        const [a, b] = await Promise.all([sqlite.find(q), memory.find(q)]);
        expect({ text, page, ids: a.items.map((d) => d.Pk), total: a.total }).toEqual({ text, page, ids: b.items.map((d) => d.Pk), total: b.total });
      }
      const other = { collection: 'constituents', filter: { op: 'contains', fields: FIELDS, text } } as const;
      expect((await sqlite.find(other)).items.map((d) => d.Pk)).toEqual((await memory.find(other)).items.map((d) => d.Pk));
    }
    await sqlite.close();
  });

  it('keeps a field inside another field out of the stored search text, and answers every search as the memory store does', async () => {
    const fields = ['Full', 'First', 'Last'];
    const people: CollectionDef = { name: 'people', idField: 'Pk', indexes: [['Team']], search: [{ fields, where: ['Team'] }] };
    const docs: Doc[] = [
      { Pk: 1, Team: 1, Full: 'Ann Annan', First: 'Ann', Last: 'Annan' },
      { Pk: 2, Team: 1, Full: 'Bo Lee', First: 'Bob', Last: 'Lee' },
      { Pk: 3, Team: 1, Full: 'ann', First: 'ANN', Last: 'ann' },
      { Pk: 4, Team: 1, Full: null, First: 'Nan', Last: 'A\u0001B' },
      { Pk: 5, Team: 1, Full: 'Xn', First: 'a', Last: 'nnx' },
    ];
    const sqlite = new SqliteReadStore(':memory:');
    const memory = new MemoryReadStore();
    for (const s of [sqlite, memory]) {
      await s.defineCollection(people);
      for (const d of docs) await s.put('people', d);
    }
    const core = (sqlite as unknown as { core: SqliteReadCore }).core;
    core.syncSearch();
    const stored = core.db.prepare('SELECT substr(s_0, 4) FROM people ORDER BY f_Pk').pluck().all();
    expect(stored).toEqual(['ann annan\u0001\u0001', 'bo lee\u0001bob\u0001', 'ann\u0001\u0001', '\u0001nan\u0001a\u0001b', 'xn\u0001a\u0001nnx']);
    for (const text of ['ann', 'an', 'a', 'n', 'nn', 'bo', 'lee', 'b l', 'nan', 'n\u0001a', 'an\u0001', '\u0001', 'xn\u0001a\u0001n', 'a\u0001b']) {
      const q: Query = { collection: 'people', filter: and(eq('Team', 1), searchFilter(text, fields, 'Pk')), sort: [{ field: 'Pk', dir: 'asc' }], page: { page: 1, pageSize: 10 } };
      const [a, b] = await Promise.all([sqlite.find(q), memory.find(q)]);
      expect({ text, ids: a.items.map((d) => d.Pk), total: a.total }).toEqual({ text, ids: b.items.map((d) => d.Pk), total: b.total });
    }
    await sqlite.close();
  });

  it('keeps searches exact while the search table waits for its sync, and the search table exact after it', async () => {
    const sqlite = new SqliteReadStore(':memory:');
    const memory = new MemoryReadStore();
    const core = (sqlite as unknown as { core: SqliteReadCore }).core;
    const waiting = () => core.db.prepare('SELECT count(*) FROM constituents__pending0').pluck().get() as number;
    // FTS5 checks an external-content index against its table (rank 1): any row it holds wrongly fails this.
    const indexMatchesRows = () => core.db.exec(`INSERT INTO constituents__fts0 (constituents__fts0, rank) VALUES ('integrity-check', 1)`);
    const same = async (when: string) => {
      for (const text of ['ann', 'annan', 'straße', 'changed', 'again', 'zoë', 'ex.org', '12', '123', '40', '41']) {
        for (const page of [1, 2]) {
          const q: Query = { collection: 'constituents', filter: and(eq('Team', 1), searchFilter(text, FIELDS, 'Pk')), sort: [{ field: 'Pk', dir: 'asc' }], page: { page, pageSize: 7 } };
          const [a, b] = await Promise.all([sqlite.find(q), memory.find(q)]);
          expect({ when, text, page, ids: a.items.map((d) => d.Pk), total: a.total }).toEqual({ when, text, page, ids: b.items.map((d) => d.Pk), total: b.total });
        }
      }
    };
    const both = async (f: (s: ReadStore) => Promise<unknown>) => Promise.all([f(sqlite), f(memory)]);
    await both((s) => s.defineCollection(constituents));
    await both(async (s) => {
      for (let i = 1; i <= 200; i++) await s.put('constituents', person(i));
    });
    expect(waiting()).toBe(200);
    await same('every row waiting');
    expect(core.syncSearch()).toBe(200);
    expect(waiting()).toBe(0);
    indexMatchesRows();
    await same('synced');
    // Changes after the sync: new text, a team move, a removal, an id removed and put again.
    await both(async (s) => {
      await s.put('constituents', { ...person(40), Name: 'Changed Ñame' });
      await s.put('constituents', { ...person(12), Name: 'Changed again', Team: 2 });
      await s.put('constituents', { ...person(15), Team: 1 });
      await s.remove('constituents', 41);
      await s.remove('constituents', 120);
      await s.put('constituents', { ...person(120), Name: 'Zoë Again' });
      await s.put('constituents', { ...person(201), Name: 'Zoë New' });
    });
    expect(waiting()).toBe(7);
    await same('some rows waiting');
    core.syncSearch();
    indexMatchesRows();
    await same('synced again');
    // A backlog under the bound is left alone; at the bound it is synced.
    await both((s) => s.put('constituents', { ...person(7), Name: 'Zoë Later' }));
    expect(core.syncSearch(2)).toBe(0);
    expect(core.syncSearch(1)).toBe(1);
    indexMatchesRows();
    await sqlite.close();
  });

  it('counts a team\u2019s hits through its marker exactly while rows wait for the sync (a big other team)', () => {
    const core = new SqliteReadCore(':memory:');
    core.define(constituents);
    const doc = (pk: number, team: number, name: string) => ({ Pk: pk, Team: team, Name: name, Email: null, _email: null, Start: null });
    core.transaction(() => {
      // More rows outside team 1 than are worth reading one by one: the count takes the marker's way.
      for (let i = 1; i <= 10_500; i++) core.put('constituents', doc(i, 2, i % 10 ? 'Other Annan' : 'Other'));
      for (let i = 20_001; i <= 20_050; i++) core.put('constituents', doc(i, 1, i % 2 ? 'Ann Lee' : 'Bo Day'));
    });
    core.syncSearch();
    core.transaction(() => {
      core.put('constituents', doc(20_001, 1, 'Renamed')); // held "ann", now does not
      core.put('constituents', doc(20_002, 1, 'Joanna')); // now holds "ann"
      core.put('constituents', doc(5, 1, 'Moved Annan')); // moved into team 1
      core.remove('constituents', 20_003);
      core.put('constituents', doc(20_051, 1, 'Ann New'));
    });
    const find = (page: number) =>
      core.find({ collection: 'constituents', filter: and(eq('Team', 1), searchFilter('ann', FIELDS, 'Pk')), sort: [{ field: 'Pk', dir: 'asc' }], page: { page, pageSize: 10 } });
    const expected = [5, 20_002, ...Array.from({ length: 25 }, (_, i) => 20_001 + 2 * i).filter((pk) => pk !== 20_001 && pk !== 20_003), 20_051];
    expect(find(1).total).toBe(expected.length);
    expect([...find(1).items, ...find(2).items, ...find(3).items].map((d) => d.Pk)).toEqual(expected);
    core.close();
  });

  it('reads look-ups, team lists and searches through indexes, never a table scan', () => {
    const core = new SqliteReadCore(':memory:');
    core.define(constituents);
    for (let i = 1; i <= 500; i++) core.put('constituents', person(i));
    core.db.exec('ANALYZE');
    const plan = (q: Omit<Query, 'collection'>) => {
      const steps: string[] = [];
      const db = core.db;
      const prepare = db.prepare.bind(db);
      // Every statement find() prepares is explained instead of only run.
      db.prepare = ((sql: string) => {
        if (sql.startsWith('SELECT')) steps.push(...(prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...sqlParams(sql)) as Array<{ detail: string }>).map((r) => r.detail));
        return prepare(sql);
      }) as typeof db.prepare;
      try {
        core.find({ collection: 'constituents', ...q });
      } finally {
        db.prepare = prepare;
      }
      return steps.join('\n');
    };
    const byPk = [{ field: 'Pk', dir: 'asc' as const }];
    const email = plan({ filter: and(eq('Team', 1), eq('_email', 'p7@ex.org')), sort: byPk, page: { page: 1, pageSize: 50 } });
    expect(email).toMatch(/USING (COVERING )?INDEX .*\(f_Team=\? AND f__email=\?\)/);
    const list = plan({ filter: eq('Team', 1), sort: byPk, page: { page: 3, pageSize: 50 } });
    expect(list).toMatch(/USING (COVERING )?INDEX/);
    expect(list).not.toMatch(/TEMP B-TREE|SCAN constituents\b(?! USING)/);
    const byStart = plan({ filter: eq('Team', 1), sort: [...constituents.sorts![0].sort], page: { page: 1, pageSize: 50 } });
    expect(byStart).not.toMatch(/TEMP B-TREE/);
    const long = plan({ filter: and(eq('Team', 1), searchFilter('annan', FIELDS, 'Pk')), sort: byPk, page: { page: 1, pageSize: 5 } });
    expect(long).toMatch(/VIRTUAL TABLE INDEX/);
    expect(long).not.toMatch(/SCAN constituents\b(?! USING)/);
    const short = plan({ filter: and(eq('Team', 1), searchFilter('an', FIELDS, 'Pk')), sort: byPk, page: { page: 2, pageSize: 5 } });
    expect(short).toMatch(/COVERING INDEX constituents__scan0/);
    core.close();
  });

  it('tests only the waiting rows on their text, looked up by rowid, without statistics as in production', () => {
    const core = new SqliteReadCore(':memory:');
    core.define(constituents);
    core.transaction(() => {
      for (let i = 1; i <= 2_000; i++) core.put('constituents', person(i));
    });
    core.syncSearch();
    core.put('constituents', { ...person(7), Name: 'Annanberg' });
    const steps: string[] = [];
    const db = core.db;
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      if (sql.startsWith('SELECT') || sql.startsWith('INSERT')) steps.push(...(prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...sqlParams(sql)) as Array<{ detail: string }>).map((r) => r.detail));
      return prepare(sql);
    }) as typeof db.prepare;
    try {
      const found = core.find({ collection: 'constituents', filter: and(eq('Team', 1), searchFilter('annanb', FIELDS, 'Pk')), sort: [{ field: 'Pk', dir: 'asc' }], page: { page: 1, pageSize: 50 } });
      expect(found.items.map((d) => d.Pk)).toEqual([7]);
      core.syncSearch();
    } finally {
      db.prepare = prepare;
    }
    const plans = steps.join('\n');
    // The waiting rows drive (a scan of the pending table), the table is only looked up by rowid:
    // the planner had scanned the team's search-text index, every row of it, for each search.
    expect(plans).toMatch(/SCAN p\b/);
    expect(plans).toMatch(/SEARCH t USING INTEGER PRIMARY KEY \(rowid=\?\)/);
    expect(plans).not.toMatch(/SCAN t\b/);
    core.close();
  });

  it('keeps documents, checkpoints and schema versions across a reopen, and rebuilds a table whose layout changed from its own documents', () => {
    const file = tempFile();
    let core = new SqliteReadCore(file);
    core.define({ ...constituents, search: [] });
    core.transaction(() => {
      for (let i = 1; i <= 20; i++) core.put('constituents', person(i));
      core.setCheckpoint('constituents', { commit: 2n ** 63n + 5n, prepare: 7n });
    });
    core.setSchemaVersion('constituents', 3);
    core.close();
    core = new SqliteReadCore(file);
    core.define(constituents);
    expect(core.get('constituents', 12)).toEqual(person(12));
    expect(core.getCheckpoint('constituents')).toEqual({ commit: 2n ** 63n + 5n, prepare: 7n });
    expect(core.schemaVersion('constituents')).toBe(3);
    expect(core.schemaVersion('donations')).toBeNull();
    const found = core.find({ collection: 'constituents', filter: and(eq('Team', 1), searchFilter('annan', FIELDS, 'Pk')), page: { page: 1, pageSize: 50 } });
    expect(found.items.map((d) => d.Pk)).toEqual([7, 16]);
    core.dropCollection('constituents');
    core.define(constituents);
    expect(core.get('constituents', 12)).toBeNull();
    core.close();
  });

  it('lays a table out again when its declared fields change, reading each document as the old layout stored it', () => {
    const file = tempFile();
    const docs: Doc[] = Array.from({ length: 12 }, (_, i) => ({ ...person(i + 1), City: i % 2 ? 'Porto' : null, Score: i % 3 ? i : null }));
    let core = new SqliteReadCore(file);
    core.define({ ...constituents, search: [] });
    for (const d of docs) core.put('constituents', d);
    core.close();
    // Plain documents to declared fields, then the declared fields' places moved and one added.
    for (const fields of [['Name', 'City', 'Score', 'Email'], ['Added', 'Score', 'Email', 'City', 'Name']]) {
      core = new SqliteReadCore(file);
      core.define({ ...constituents, fields });
      for (const d of docs) expect(core.get('constituents', d.Pk as number)).toEqual(Object.fromEntries([...fields.map((f) => [f, null]), ...Object.entries(d)]));
      const found = core.find({ collection: 'constituents', filter: and(eq('Team', 1), { op: 'eq', field: 'City', value: 'Porto' }), sort: [{ field: 'Pk', dir: 'asc' }] });
      expect(found.items.map((d) => d.Pk)).toEqual(docs.filter((d) => d.Team === 1 && d.City === 'Porto').map((d) => d.Pk));
      core.close();
    }
  });

  it('commits a batch and its checkpoint together, or neither', () => {
    const core = new SqliteReadCore(':memory:');
    core.define(constituents);
    expect(() =>
      core.transaction(() => {
        core.put('constituents', person(1));
        core.setCheckpoint('constituents', { commit: 1n, prepare: 1n });
        throw new Error('projector failed');
      }),
    ).toThrow('projector failed');
    expect(core.get('constituents', 1)).toBeNull();
    expect(core.getCheckpoint('constituents')).toBeNull();
    core.close();
  });

  it('builds the search index once after a bulk load, and after a crash in the middle of one', () => {
    const file = tempFile();
    let core = new SqliteReadCore(file);
    core.define(constituents);
    core.beginBulk(['constituents']);
    core.transaction(() => {
      for (let i = 1; i <= 100; i++) core.put('constituents', person(i));
    });
    core.close(); // no endBulk: the process died
    core = new SqliteReadCore(file);
    core.define(constituents);
    const search = (text: string) => core.find({ collection: 'constituents', filter: and(eq('Team', 1), searchFilter(text, FIELDS, 'Pk')), page: { page: 1, pageSize: 50 } });
    const expected = Array.from({ length: 100 }, (_, i) => person(i + 1)).filter((d) => d.Team === 1 && String(d.Name).includes('Straße'));
    expect(expected.length).toBeGreaterThan(5);
    expect(search('straße').total).toBe(expected.length);
    core.beginBulk();
    core.put('constituents', { ...person(1), Name: 'Zoë Bulk' });
    core.endBulk();
    core.put('constituents', { ...person(2), Name: 'Zoë After' });
    expect(search('zoë').items.map((d) => d.Pk)).toEqual([1, 2]);
    core.close();
  });
});

/** Placeholder values for explaining a statement: the plan does not depend on them. */
function sqlParams(sql: string): unknown[] {
  return Array.from(sql.matchAll(/\?/g), () => 1);
}

describe('a short search answered again', () => {
  const def: CollectionDef = { name: 'people', idField: 'Pk', search: [{ fields: ['Name'], where: ['Team'] }] };
  const query = (text: string): Query => ({ collection: 'people', filter: and(eq('Team', 1), searchFilter(text, ['Name'], 'Pk')), sort: [{ field: 'Pk', dir: 'asc' }], page: { page: 1, pageSize: 10 } });

  it("leaves out an offline bulk load's look-up indexes only where no projector looks the collection up, and builds them at its end; a live catch-up keeps them", () => {
    const core = new SqliteReadCore(':memory:');
    core.define({ ...constituents, lookupsOutsideProjection: true });
    core.define({ ...constituents, name: 'looked_up' });
    const indexes = () => core.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND sql LIKE '%f__email%'`).pluck().all() as string[];
    const all = indexes();
    expect(all).toHaveLength(2);
    // A live catch-up (the projector thread far behind) serves look-ups meanwhile: a batch's upsert by e-mail.
    core.beginBulk();
    expect(indexes().sort()).toEqual([...all].sort());
    core.endBulk();
    core.beginBulk(undefined, { offline: true });
    expect(indexes()).toEqual(all.filter((n) => n.startsWith('looked_up')));
    core.transaction(() => {
      for (let i = 1; i <= 50; i++) for (const c of ['constituents', 'looked_up']) core.put(c, person(i));
    });
    const byEmail = (c: string) => core.find({ collection: c, filter: and(eq('Team', 1), eq('_email', 'p7@ex.org')), page: { page: 1, pageSize: 5 } }).items;
    expect(byEmail('constituents')).toEqual([person(7)]);
    core.endBulk();
    expect(indexes().sort()).toEqual([...all].sort());
    expect(byEmail('constituents')).toEqual(byEmail('looked_up'));
    core.close();
  });

  it('sees what this connection wrote since it was first answered', async () => {
    const store = new SqliteReadStore(':memory:');
    await store.defineCollection(def);
    await store.put('people', { Pk: 1, Team: 1, Name: 'Ann' });
    expect((await store.find(query('an'))).total).toBe(1);
    await store.put('people', { Pk: 2, Team: 1, Name: 'Dan' });
    expect((await store.find(query('an'))).items.map((d) => d.Name)).toEqual(['Ann', 'Dan']);
    await store.close();
  });

  it('sees what another connection (the projector thread) committed since', async () => {
    const file = tempFile();
    const writer = new SqliteReadCore(file);
    writer.define(def);
    writer.put('people', { Pk: 1, Team: 1, Name: 'Ann' });
    const reader = new SqliteReadCore(file, { laidOutElsewhere: true });
    reader.define(def);
    expect(reader.find(query('an')).total).toBe(1);
    writer.put('people', { Pk: 2, Team: 1, Name: 'Dan' });
    expect(reader.find(query('an')).total).toBe(2);
    // A page handed out is the caller's: changing it changes no later answer.
    (reader.find(query('an')).items as Doc[]).pop();
    expect(reader.find(query('an')).items).toHaveLength(2);
    reader.close();
    writer.close();
  });
});
