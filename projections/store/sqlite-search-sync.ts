import type Database from 'better-sqlite3';
import type { Connection } from './sqlite-connection.js';
import { GramCounter } from './sqlite-grams.js';
import { markerLength, quoteId, type SearchPlan, type TablePlan } from './sqlite-schema.js';

/**
 * Brings every search table up to date with the rows changed since its last sync, in one
 * transaction (a savepoint inside the caller's): a big batch costs far less per row than the
 * row-by-row upkeep it replaces. `atLeast` skips search tables with fewer rows waiting.
 * Answers the rows synced. Searches are exact either way (sqlite-query.ts hitsOf).
 */
export function syncSearch(conn: Connection, atLeast = 1): number {
  let synced = 0;
  // IMMEDIATE: it reads before it writes, and another connection may write in between.
  conn.db
    .transaction(() => {
      for (const plan of conn.plans.values()) {
        for (const s of plan.searches) {
          const waiting = conn.stmt(`SELECT count(*) FROM ${s.pending}`).pluck().get() as number;
          if (waiting < atLeast) continue;
          syncOne(conn, plan, s);
          synced += waiting;
        }
      }
    })
    .immediate();
  return synced;
}

function syncOne(conn: Connection, plan: TablePlan, s: SearchPlan): void {
  syncGrams(conn, plan, s);
  conn.stmt(`INSERT INTO ${s.fts} (${s.fts}, rowid, ${s.column}) SELECT 'delete', row, old FROM ${s.pending} WHERE old IS NOT NULL ORDER BY row`).run();
  conn.stmt(`INSERT INTO ${s.fts} (rowid, ${s.column}) SELECT p.row, t.${s.column} FROM ${s.pending} p CROSS JOIN ${plan.table} t ON t.rowid = p.row ORDER BY p.row`).run();
  conn.stmt(`DELETE FROM ${s.pending}`).run();
}

/**
 * The gram table follows the waiting rows as the FTS5 table does: each row's old text (the one
 * the tables hold) taken away, its text now added. Fed grouped by team, so each team's grams
 * are written once.
 */
function syncGrams(conn: Connection, plan: TablePlan, s: SearchPlan): void {
  const length = markerLength(s);
  if (length === 0) return;
  const rows = conn.stmt(`SELECT p.old, t.${s.column} FROM ${s.pending} p LEFT JOIN ${plan.table} t ON t.rowid = p.row`).raw().all() as Array<[string | null, string | null]>;
  const texts: Array<[string, 1 | -1]> = [];
  for (const [old, now] of rows) {
    if (old) texts.push([old, -1]);
    if (now) texts.push([now, 1]);
  }
  // Grouped by team (the marker each text begins with); the order within a team does not matter.
  const byTeam = texts.map(([text, sign]) => ({ team: text.slice(0, length), text, sign })).sort((a, b) => (a.team < b.team ? -1 : a.team > b.team ? 1 : 0));
  const counter = new GramCounter(length, gramWriter(conn, s));
  for (const { text, sign } of byTeam) counter.add(text, sign);
  counter.flush();
}

/** Adds a change to a team's gram count; a count that reaches 0 goes. */
function gramWriter(conn: Connection, s: SearchPlan): (marker: string, gram: string, delta: number) => void {
  const upsert = conn.stmt(`INSERT INTO ${s.grams} (m, g, n) VALUES (?, ?, ?) ON CONFLICT(m, g) DO UPDATE SET n = n + excluded.n`);
  const drop = conn.stmt(`DELETE FROM ${s.grams} WHERE m = ? AND g = ? AND n = 0`);
  return (marker, gram, delta) => {
    upsert.run(marker, gram, delta);
    if (delta < 0) drop.run(marker, gram);
  };
}

/**
 * Counts every row's grams afresh (a bulk load's end), a team at a time through the scan index:
 * a team's rows are read whole before its counts are written (better-sqlite3 writes nothing
 * while a statement iterates), so memory holds one team's counts, never the rows.
 */
export function rebuildGrams(conn: Connection, plan: TablePlan, s: SearchPlan): void {
  const { db } = conn;
  db.exec(`DELETE FROM ${s.grams}`);
  const length = markerLength(s);
  if (length === 0) return;
  const changes: Array<[string, string, number]> = [];
  const counter = new GramCounter(length, (m, g, n) => changes.push([m, g, n]));
  const write = gramWriter(conn, s);
  const cols = s.where.map((f) => plan.columns.get(f)!);
  const tuple = `(${cols.join(', ')})`;
  const from = `${plan.table} INDEXED BY ${s.scanIndex}`;
  const first = db.prepare(`SELECT ${cols.join(', ')} FROM ${from} WHERE ${cols.map((c) => `${c} IS NOT NULL`).join(' AND ')} ORDER BY ${cols.join(', ')} LIMIT 1`).raw();
  const next = db.prepare(`SELECT ${cols.join(', ')} FROM ${from} WHERE ${tuple} > (${cols.map(() => '?').join(', ')}) ORDER BY ${cols.join(', ')} LIMIT 1`).raw();
  const texts = db.prepare(`SELECT ${s.column} FROM ${from} WHERE ${cols.map((c) => `${c} = ?`).join(' AND ')}`).pluck();
  for (let team = first.get() as unknown[] | undefined; team; team = next.get(...team) as unknown[] | undefined) {
    for (const text of texts.iterate(...team)) counter.add(text as string, 1);
    counter.flush();
    for (const [m, g, n] of changes) write(m, g, n);
    changes.length = 0;
  }
}

/**
 * Merges each FTS5 table of the file into one segment ('optimize'), each in a transaction of its
 * own. FTS5 secure-delete is off, so a deleted or replaced text's grams stay in the older
 * segments, behind the delete entries that hide them, until a merge takes both; this merge takes
 * every segment, so none is left. With secure_delete on, the freed pages are zeroed (an erasure,
 * decisions.md §17). A table already in one segment is left as it is (FTS5 checks). Answers the
 * tables merged.
 */
export function optimizeSearchTables(db: Database.Database): string[] {
  const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE % USING fts5(%' ORDER BY name`).pluck().all() as string[];
  for (const t of tables) db.prepare(`INSERT INTO ${quoteId(t)} (${quoteId(t)}) VALUES ('optimize')`).run();
  return tables;
}
