import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { truncateWal } from '../../eventlog/erase.js';
import { type CollectionDef, searchFilter } from '../../projections/store/port.js';
import { COLLECTIONS } from '../../projections/store/sqlite-connection.js';
import { SqliteReadCore } from '../../projections/store/sqlite-core.js';
import { optimizeSearchOffThread } from '../../runtime/search-optimize.js';
import { tempDirs } from '../support/temp-dirs.js';

/**
 * The search index without FTS5 secure-delete (a deleted row's grams stay in older segments,
 * hidden by delete entries, until a merge takes both): an erasure's scrub (runtime/erasure.ts)
 * merges every search table whole, so no gram of an erased text, of any revision, remains in
 * the file or its WAL (decisions.md §17).
 *
 * Texts of letters no other row uses: FTS5 prefix-compresses each term against the one before
 * it, so only a gram whose first byte no earlier gram shares is stored whole in a segment and
 * found by a scan of the raw bytes. 'ж', 'ъ' (the erased row's two revisions) and 'щ' (a
 * control row) are such letters here.
 */
const def: CollectionDef = { name: 'people', idField: 'Pk', indexes: [['Team']], search: [{ fields: ['Name'], where: ['Team'] }] };
const ERASED = ['жжжжж', 'ъъъъъ'];
const CONTROL = 'щщщщщ';
const tempDir = tempDirs('turnout-search-erasure-');

/** Which of the grams of `texts` occur in the file or its WAL, as raw bytes. */
function gramsIn(file: string, texts: string[]): string[] {
  const bytes = [file, `${file}-wal`].filter(existsSync).map((f) => readFileSync(f));
  const grams = texts.map((t) => t.slice(0, 3));
  return grams.filter((g) => bytes.some((b) => b.includes(Buffer.from(g, 'utf8'))));
}

describe("an erasure's scrub of the search index", () => {
  it('leaves no gram of an erased row, at any revision, in the file or its WAL, while a control row\u2019s are found', async () => {
    const file = path.join(tempDir(), 'readmodels.sqlite');
    const core = new SqliteReadCore(file);
    core.define(def);
    core.transaction(() => {
      for (let i = 1; i <= 300; i++) core.put('people', { Pk: i, Team: 1 + (i % 3), Name: `Plain Person ${i}` });
    });
    core.syncSearch();
    core.put('people', { Pk: 1000, Team: 1, Name: CONTROL });
    core.put('people', { Pk: 1001, Team: 1, Name: ERASED[0] });
    core.syncSearch();
    // A later revision, then the row's removal (as ConstituentErased drops it), each synced in
    // a transaction of its own: each sync writes a segment of its own.
    core.put('people', { Pk: 1001, Team: 1, Name: ERASED[1] });
    core.syncSearch();
    core.remove('people', 1001);
    core.syncSearch();
    await truncateWal(core.db);
    expect(core.find({ collection: 'people', filter: searchFilter('щщщ', ['Name'], 'Pk'), page: { page: 1, pageSize: 10 } }).items).toHaveLength(1);
    // Without the merge, the old segments still hold them: what the scrub must remove.
    expect(gramsIn(file, ERASED)).not.toEqual([]);

    expect(await optimizeSearchOffThread(file)).toEqual(['people__fts0']);
    await truncateWal(core.db);
    expect(gramsIn(file, ERASED)).toEqual([]);
    expect(gramsIn(file, [CONTROL])).toEqual(['щщщ']);
    core.close();
    expect(gramsIn(file, ERASED)).toEqual([]);
  });
});

describe('opening a read-model file whose search tables were made with FTS5 secure-delete on', () => {
  it('turns it off, keeping the tables as they are (no new layout)', () => {
    const file = path.join(tempDir(), 'readmodels.sqlite');
    const first = new SqliteReadCore(file);
    first.define(def);
    first.put('people', { Pk: 1, Team: 1, Name: 'Kept Row' });
    first.syncSearch();
    // As the store made them before: the setting on, and the statement among the layout's DDL.
    const layout = JSON.parse(first.db.prepare(`SELECT layout FROM ${COLLECTIONS} WHERE name = 'people'`).pluck().get() as string) as [string[], ...unknown[]];
    const at = layout[0].findIndex((sql) => sql.startsWith('CREATE VIRTUAL TABLE "people__fts0"'));
    layout[0].splice(at + 1, 0, `INSERT INTO "people__fts0" ("people__fts0", rank) VALUES ('secure-delete', 1)`);
    first.db.prepare(`UPDATE ${COLLECTIONS} SET layout = ? WHERE name = 'people'`).run(JSON.stringify(layout));
    first.db.exec(`INSERT INTO "people__fts0" ("people__fts0", rank) VALUES ('secure-delete', 1)`);
    const secureDelete = (db: Database.Database) => db.prepare(`SELECT v FROM "people__fts0_config" WHERE k = 'secure-delete'`).pluck().get();
    expect(secureDelete(first.db)).toBe(1);
    const schema = first.db.pragma('schema_version', { simple: true });
    first.close();

    const again = new SqliteReadCore(file);
    again.define(def);
    expect(secureDelete(again.db)).toBe(0);
    // Not laid out again from its documents (which would change the schema).
    expect(again.db.pragma('schema_version', { simple: true })).toBe(schema);
    expect(again.get('people', 1)).toMatchObject({ Name: 'Kept Row' });
    again.close();
  });
});
