import type Database from 'better-sqlite3';
import { CHECKPOINTS, COLLECTIONS, type Connection, VERSIONS } from './sqlite-connection.js';
import { docColumns, docOf, quoteId, quoteText, rowColumns, rowOf, type TablePlan } from './sqlite-schema.js';
import { rebuildGrams } from './sqlite-search-sync.js';

/** FTS5's in-memory hash of pending terms: its default, and while a search table is built whole. */
const FTS5_HASH = 1024 * 1024;
const FTS5_BULK_HASH = 64 * 1024 * 1024;
/**
 * The hash for a build offline (a rebuild's new file, in a process of its own): at a million
 * constituents 64 MiB flushes several segments, which the optimize after then merges (1.4 s of
 * CPU); 256 MiB holds about all of them, and the optimize takes 0.4 s. Memory only as the terms need.
 */
const FTS5_OFFLINE_HASH = 256 * 1024 * 1024;
/** Rows read per step where a whole collection is walked, so memory stays bounded. */
const CHUNK = 2_000;

/** The store's own tables, created by the connection that lays the database out. */
export function createMetaTables(db: Database.Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS ${COLLECTIONS} (name TEXT PRIMARY KEY, layout TEXT NOT NULL, bulk INTEGER NOT NULL DEFAULT 0);
    CREATE TABLE IF NOT EXISTS ${CHECKPOINTS} (name TEXT PRIMARY KEY, position TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS ${VERSIONS} (name TEXT PRIMARY KEY, version INTEGER NOT NULL);`);
}

/**
 * Creates the collection's table, indexes and search tables, or checks them: a table laid out
 * for another definition (an index or search added) is laid out again from its own documents,
 * and one left in bulk mode by a crash gets its search index rebuilt.
 */
export function layOut(conn: Connection, plan: TablePlan): void {
  // The declared fields too: their places are the keys of stored documents (storedDoc).
  const layout = JSON.stringify(plan.def.fields ? [plan.ddl, plan.triggers, plan.def.fields] : [plan.ddl, plan.triggers]);
  const row = conn.stmt(`SELECT layout, bulk FROM ${COLLECTIONS} WHERE name = ?`).get(plan.def.name) as { layout: string; bulk: number } | undefined;
  conn.transaction(() => {
    if (!row) {
      for (const sql of [...plan.ddl, ...plan.triggers]) conn.db.exec(sql);
      conn.stmt(`INSERT INTO ${COLLECTIONS} (name, layout) VALUES (?, ?)`).run(plan.def.name, layout);
    } else if (row.layout !== layout && !withSecureDelete(row.layout, layout)) relayout(conn, plan, layout, (JSON.parse(row.layout) as [unknown, unknown, string[]?])[2]);
    else {
      if (row.layout !== layout) {
        // Search tables made with FTS5 secure-delete on (a setting each table keeps, and the one
        // difference from this layout): turned off, as new ones are made (sqlite-schema.ts), once.
        for (const s of plan.searches) conn.db.exec(`INSERT INTO ${s.fts} (${s.fts}, rank) VALUES ('secure-delete', 0)`);
        conn.stmt(`UPDATE ${COLLECTIONS} SET layout = ? WHERE name = ?`).run(layout, plan.def.name);
      }
      if (row.bulk) finishBulk(conn, plan);
    }
  });
}

const SECURE_DELETE_ON = /^INSERT INTO .+ VALUES \('secure-delete', 1\)$/;

/**
 * Whether a stored layout is this one but for the FTS5 secure-delete setting its search tables
 * were once made with: the same tables and index content, kept (no rebuild) with the setting
 * turned off.
 */
function withSecureDelete(stored: string, layout: string): boolean {
  const [ddl, ...rest] = JSON.parse(stored) as [string[], ...unknown[]];
  return ddl.some((sql) => SECURE_DELETE_ON.test(sql)) && JSON.stringify([ddl.filter((sql) => !SECURE_DELETE_ON.test(sql)), ...rest]) === layout;
}

/**
 * Bulk mode for a rebuild: the search tables of these collections stop following each row
 * (their triggers are dropped) until endBulk() builds them once, which is several times faster
 * than row by row. A crash in between is repaired by the next define().
 */
export function beginBulk(conn: Connection, plans: TablePlan[], offline = false): void {
  conn.transaction(() => {
    for (const plan of plans) {
      for (const sql of plan.triggers) conn.db.exec(`DROP TRIGGER IF EXISTS ${/TRIGGER IF NOT EXISTS ("(?:[^"]|"")+")/.exec(sql)![1]}`);
      for (const sql of offline ? [...plan.listIndexes, ...plan.lookupIndexes] : plan.listIndexes) conn.db.exec(`DROP INDEX IF EXISTS ${/^CREATE INDEX ("(?:[^"]|"")+")/.exec(sql)![1]}`);
      conn.stmt(`UPDATE ${COLLECTIONS} SET bulk = 1 WHERE name = ?`).run(plan.def.name);
    }
  });
}

/** Whether the collection is in bulk mode (its search tables wait for endBulk). */
export function inBulk(conn: Connection, name: string): boolean {
  return conn.stmt(`SELECT bulk FROM ${COLLECTIONS} WHERE name = ?`).pluck().get(name) === 1;
}

/**
 * `offline`: a file no one reads until it is whole (a rebuild), which may take more memory for the
 * search index. `searchesBuilt`: the search indexes are built elsewhere and adopted after
 * (adoptSearchIndexes), so only the other indexes are built here.
 */
export function endBulk(conn: Connection, plans: TablePlan[], offline = false, searchesBuilt = false): void {
  conn.transaction(() => {
    for (const plan of plans) finishBulk(conn, plan, offline ? FTS5_OFFLINE_HASH : FTS5_BULK_HASH, !searchesBuilt);
  });
}

/**
 * Builds a collection's search index from its rows' text in a file of its own (a thread of an
 * offline rebuild, runtime/rebuild-search.ts), in two steps: `copy` the text from the file
 * attached as `source` into a plain table, with the same FTS5 table laid out over it; then
 * `index` it whole. Its rows keep their rowids, so the index is the one the collection's own would be.
 */
export function buildSearchIndexApart(db: Database.Database, search: { table: string; fts: string; column: string }, step: 'copy' | 'index'): void {
  const text = quoteId(`${unquote(search.fts)}__text`);
  if (step === 'index') {
    db.exec(
      `INSERT INTO ${search.fts}(${search.fts}, rank) VALUES ('hashsize', ${FTS5_OFFLINE_HASH}); INSERT INTO ${search.fts}(${search.fts}) VALUES ('rebuild'); ` +
        `INSERT INTO ${search.fts}(${search.fts}) VALUES ('optimize');`,
    );
    return;
  }
  const ddl = db.prepare(`SELECT sql FROM source.sqlite_master WHERE type = 'table' AND name = ?`).pluck().get(unquote(search.fts)) as string | undefined;
  const content = ddl ? /content=('(?:[^']|'')*')/.exec(ddl) : null;
  if (!ddl || !content) throw new Error(`no search table ${search.fts} over a content table`);
  db.exec(`CREATE TABLE ${text} (${search.column} TEXT)`);
  db.exec(`INSERT INTO ${text} (rowid, ${search.column}) SELECT rowid, ${search.column} FROM source.${search.table}`);
  db.exec(ddl.replace(`content=${content[1]}`, `content=${quoteText(unquote(text))}`));
}

/**
 * Takes the search indexes built by buildSearchIndexApart, in the database attached as `schema`:
 * FTS5 keeps its index in two plain tables (its segments and their index), copied over the empty
 * ones. Written behind FTS5's back (so the connection must allow writing its shadow tables), so
 * this connection must not write through those search tables afterwards: the file is closed once
 * its rebuild is done, and every later connection reads the index as stored.
 */
export function adoptSearchIndexes(conn: Connection, plans: TablePlan[], schema: string): void {
  conn.transaction(() => {
    for (const plan of plans)
      for (const s of plan.searches) {
        for (const suffix of ['_data', '_idx']) {
          const shadow = quoteId(`${unquote(s.fts)}${suffix}`);
          conn.db.exec(`DELETE FROM main.${shadow}; INSERT INTO main.${shadow} SELECT * FROM ${schema}.${shadow}`);
        }
        conn.db.exec(`DELETE FROM ${s.pending}`);
      }
  });
}

/** A name as quoteId wrote it, unquoted. */
function unquote(quoted: string): string {
  return quoted.slice(1, -1).replaceAll('""', '"');
}

/** The schema version recorded for a read model (or projector), null when none is. */
export function schemaVersion(conn: Connection, name: string): number | null {
  return (conn.stmt(`SELECT version FROM ${VERSIONS} WHERE name = ?`).pluck().get(name) as number | undefined) ?? null;
}

export function setSchemaVersion(conn: Connection, name: string, version: number): void {
  conn.stmt(`INSERT INTO ${VERSIONS} (name, version) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET version = excluded.version`).run(name, version);
}

/** Drops a collection with its indexes and search tables; define() creates it afresh. */
export function dropCollection(conn: Connection, name: string): void {
  conn.transaction(() => {
    dropObjects(conn.db, name);
    conn.stmt(`DELETE FROM ${COLLECTIONS} WHERE name = ?`).run(name);
  });
  conn.plans.delete(name);
  conn.forgetStatements();
}

/** Drops every collection, checkpoint and schema version. */
export function dropAll(conn: Connection): void {
  const names = conn.stmt(`SELECT name FROM ${COLLECTIONS}`).pluck().all() as string[];
  for (const n of names) dropCollection(conn, n);
  conn.db.exec(`DELETE FROM ${CHECKPOINTS}; DELETE FROM ${VERSIONS};`);
}

function finishBulk(conn: Connection, plan: TablePlan, hash = FTS5_BULK_HASH, searches = true): void {
  // Rebuilt as one segment, then optimised: later row-by-row changes otherwise merge into
  // that segment again and again, at several times the cost per update.
  // The rebuild reads every row as it is now: nothing is left waiting for a sync.
  // Its terms gather in a hash of `hash` bytes meanwhile (1 MiB by default, which flushes a
  // segment for every MiB and merges them again and again), set back after.
  for (const s of searches ? plan.searches : [])
    conn.db.exec(
      `INSERT INTO ${s.fts}(${s.fts}, rank) VALUES ('hashsize', ${hash}); INSERT INTO ${s.fts}(${s.fts}) VALUES ('rebuild'); ` +
        `INSERT INTO ${s.fts}(${s.fts}) VALUES ('optimize'); INSERT INTO ${s.fts}(${s.fts}, rank) VALUES ('hashsize', ${FTS5_HASH}); DELETE FROM ${s.pending};`,
    );
  for (const sql of [...plan.listIndexes, ...plan.lookupIndexes]) conn.db.exec(sql.replace(/^CREATE INDEX /, 'CREATE INDEX IF NOT EXISTS '));
  // After the scan indexes: the gram count reads the rows through them, a team at a time.
  for (const s of plan.searches) rebuildGrams(conn, plan, s);
  for (const sql of plan.triggers) conn.db.exec(sql);
  conn.stmt(`UPDATE ${COLLECTIONS} SET bulk = 0 WHERE name = ?`).run(plan.def.name);
}

/** The table and everything built on it: indexes and triggers go with it, search tables by name. */
function dropObjects(db: Database.Database, name: string): void {
  const tablesNamed = (prefix: string, sql: string) =>
    db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE ? AND substr(name, 1, ?) = ?`).pluck().all(sql, prefix.length, prefix) as string[];
  const search = [...tablesNamed(`${name}__fts`, 'CREATE VIRTUAL TABLE%'), ...tablesNamed(`${name}__pending`, 'CREATE TABLE%'), ...tablesNamed(`${name}__grams`, 'CREATE TABLE%')];
  for (const t of search) db.exec(`DROP TABLE ${quoteId(t)}`);
  db.exec(`DROP TABLE IF EXISTS ${quoteId(name)}`);
}

/** A table laid out for another definition, moved to the new layout from its own documents. */
function relayout(conn: Connection, plan: TablePlan, layout: string, oldFields: string[] | undefined): void {
  const { db } = conn;
  const name = plan.def.name;
  const old = quoteId(`${name}__relayout`);
  db.exec(`DROP TABLE IF EXISTS ${old}`);
  // The old layout's columns come too: its documents may have left out what they held (storedDoc).
  db.exec(`CREATE TABLE ${old} AS SELECT rowid AS r, * FROM ${plan.table}`);
  const held = (db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(`${name}__relayout`) as string[]).filter((c) => c === 'doc' || c.startsWith('f_'));
  // Documents as the old layout stored them: its columns, its declared fields' places.
  const oldPlan = { columns: new Map(held.filter((c) => c !== 'doc').map((c) => [c.slice(2), quoteId(c)])), blank: plan.blank, def: { ...plan.def, fields: oldFields } };
  dropObjects(db, name);
  conn.forgetStatements();
  for (const sql of plan.ddl) db.exec(sql);
  const cols = rowColumns(plan);
  const insert = db.prepare(`INSERT INTO ${plan.table} (rowid, ${cols.join(', ')}) VALUES (?, ${cols.map(() => '?').join(', ')})`);
  const select = db.prepare(`SELECT r, ${docColumns(oldPlan)} FROM ${old} WHERE r > ? ORDER BY r LIMIT ${CHUNK}`).raw();
  for (let after = -Infinity; ; ) {
    const rows = select.all(after) as unknown[][];
    for (const row of rows) insert.run(row[0], ...rowOf(plan, docOf(oldPlan, row.slice(1))));
    if (rows.length < CHUNK) break;
    after = rows[rows.length - 1][0] as number;
  }
  db.exec(`DROP TABLE ${old}`);
  finishBulk(conn, plan);
  conn.stmt(`UPDATE ${COLLECTIONS} SET layout = ? WHERE name = ?`).run(layout, name);
}
