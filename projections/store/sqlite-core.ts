import Database from 'better-sqlite3';
import { type Position, positionFromString, positionToString } from '../../domain/shared/events.js';
import type { CollectionDef, Doc, Filter, Page, Query } from './port.js';
import { compileWhere, FOLD_FUNCTION, fold } from './sqlite-query.js';
import { planSearched } from './sqlite-search.js';
import { GramCounter } from './sqlite-grams.js';
import { jsonPath, keyOf, markerLength, META_PREFIX, orderTerms, planOf, quoteId, rowColumns, rowOf, type SearchPlan, type TablePlan } from './sqlite-schema.js';

const COLLECTIONS = `${META_PREFIX}collections`;
const CHECKPOINTS = `${META_PREFIX}checkpoints`;
const VERSIONS = `${META_PREFIX}versions`;
/** FTS5's in-memory hash of pending terms: its default, and while a search table is built whole. */
const FTS5_HASH = 1024 * 1024;
const FTS5_BULK_HASH = 64 * 1024 * 1024;
/** Rows read per step where a whole collection is walked, so memory stays bounded. */
const CHUNK = 2_000;

/**
 * The SQLite read store's synchronous core: every method is a plain call on better-sqlite3, so
 * it can run on the main thread behind the async port (sqlite.ts) or inside a worker thread
 * that applies a batch of events in one transaction.
 *
 * Durability: WAL with synchronous=NORMAL. A power cut may lose the last transactions, never
 * corrupt the file; read models are rebuildable from the log, and each projector's checkpoint is
 * stored in this same database and written in the same transaction as its changes (use
 * transaction() or begin()/commit()), so what survives is always consistent with its checkpoint
 * and the projector resumes from there.
 */
export class SqliteReadCore {
  readonly db: Database.Database;
  private readonly plans = new Map<string, TablePlan>();
  private readonly statements = new Map<string, Database.Statement>();

  /**
   * `fresh`: a new file being built whole (see below), WAL-journalled once done (`finishFresh`).
   *
   * `laidOutElsewhere`: a connection to a database another connection (the projector thread)
   * lays out: define() then plans the collection without touching the file. The main thread's
   * reading connection is one; the log's writer thread, which applies its own commits inline
   * once the projector thread has laid the database out, is another.
   */
  constructor(
    path: string,
    private readonly options: { laidOutElsewhere?: boolean; fresh?: boolean } = {},
  ) {
    this.db = new Database(path);
    // Writers of another thread or process hold the lock for one transaction at a time.
    this.db.pragma('busy_timeout = 10000');
    if (options.fresh) {
      // A file built from nothing that no one reads until it is done (an offline rebuild,
      // runtime/rebuild.ts): the rollback journal in memory (a transaction can still roll back)
      // and no syncs, as a crash leaves only a file the next rebuild deletes.
      this.db.pragma('journal_mode = MEMORY');
      this.db.pragma('synchronous = OFF');
    } else {
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = NORMAL');
    }
    // A bounded page cache (64 MiB): the working set of a million rows stays on disk, not in the heap.
    this.db.pragma('cache_size = -65536');
    this.db.function(FOLD_FUNCTION, { deterministic: true }, fold);
    if (options.laidOutElsewhere) return;
    this.db.exec(`CREATE TABLE IF NOT EXISTS ${COLLECTIONS} (name TEXT PRIMARY KEY, layout TEXT NOT NULL, bulk INTEGER NOT NULL DEFAULT 0);
      CREATE TABLE IF NOT EXISTS ${CHECKPOINTS} (name TEXT PRIMARY KEY, position TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS ${VERSIONS} (name TEXT PRIMARY KEY, version INTEGER NOT NULL);`);
  }

  /**
   * Creates the collection's table, indexes and search tables, or checks them: a table laid out
   * for another definition (an index or search added) is rebuilt from its own documents, and
   * one left in bulk mode by a crash gets its search index rebuilt.
   */
  define(def: CollectionDef): void {
    if (this.plans.has(def.name)) return;
    const plan = planOf(def);
    if (this.options.laidOutElsewhere) {
      this.plans.set(def.name, plan);
      return;
    }
    const layout = JSON.stringify([plan.ddl, plan.triggers]);
    const row = this.stmt(`SELECT layout, bulk FROM ${COLLECTIONS} WHERE name = ?`).get(def.name) as { layout: string; bulk: number } | undefined;
    this.transaction(() => {
      if (!row) {
        for (const sql of [...plan.ddl, ...plan.triggers]) this.db.exec(sql);
        this.stmt(`INSERT INTO ${COLLECTIONS} (name, layout) VALUES (?, ?)`).run(def.name, layout);
      } else if (row.layout === layoutBeforeGrams(plan)) this.addGrams(plan, layout);
      else if (row.layout !== layout) this.relayout(plan, layout);
      else if (row.bulk) this.finishBulk(plan);
    });
    this.plans.set(def.name, plan);
  }

  get(collection: string, id: number | string): Doc | null {
    const plan = this.plan(collection);
    const row = this.stmt(`SELECT doc FROM ${plan.table} WHERE _key = ?`).get(String(id)) as { doc: string } | undefined;
    return row ? JSON.parse(row.doc) : null;
  }

  /**
   * One query, read from one snapshot: a search counts from its index, then corrects for the rows
   * waiting for the sync, then reads its page, and another connection (the projector thread)
   * committing a sync in between would otherwise make the total miss or count a row twice.
   */
  find(query: Query): Page {
    return this.db.inTransaction ? this.findNow(query) : this.readSnapshot(() => this.findNow(query));
  }

  private readonly readSnapshot = <T>(fn: () => T): T => this.db.transaction(fn).deferred();

  private findNow(query: Query): Page {
    // In bulk mode (a catch-up far behind) the search tables and the scan indexes wait for its
    // end: a search reads the rows, slowly but exactly (reads wait for the catch-up after a
    // start). Only a query holding a search asks, so lists and look-ups pay nothing for it.
    const plan = holdsText(query.filter) && this.inBulk(query.collection) ? { ...this.plan(query.collection), searches: [] } : this.plan(query.collection);
    const where = compileWhere(plan, query.filter);
    const order = [...orderTerms(plan, query.sort ?? []), 'rowid'].join(', ');
    const sums = query.sums ?? [];
    const page = query.page;
    if (!page) {
      const rows = this.stmt(`SELECT doc FROM ${plan.table} WHERE ${where.sql} ORDER BY ${order}`).pluck().all(...where.params) as string[];
      const items = rows.map((d) => JSON.parse(d) as Doc);
      return { items, total: items.length, sums: sumsOf(items, sums) };
    }
    const searched = planSearched(plan, query, (sql) => this.stmt(sql));
    // A search of one or two characters reads the team's whole slice of an index for its total:
    // its page is kept until the database changes, as such searches repeat (a type-ahead's first keys).
    if (searched?.hits !== -1) return this.findPage(plan, query, where, order, searched);
    const key = JSON.stringify(query);
    const version = this.version();
    const cached = this.shortSearches.get(key);
    if (cached && cached.version === version) return structuredClone(cached.page);
    const found = this.findPage(plan, query, where, order, searched);
    if (this.shortSearches.size >= 256) this.shortSearches.delete(this.shortSearches.keys().next().value!);
    this.shortSearches.set(key, { version, page: structuredClone(found) });
    return found;
  }

  private readonly shortSearches = new Map<string, { version: string; page: Page }>();

  /** Changes whenever anything commits: another connection (data_version) or this one (total_changes). */
  private version(): string {
    return `${this.stmt('PRAGMA data_version').pluck().get()}:${this.stmt('SELECT total_changes()').pluck().get()}`;
  }

  private findPage(plan: TablePlan, query: Query, where: ReturnType<typeof compileWhere>, order: string, searched: ReturnType<typeof planSearched>): Page {
    const page = query.page!;
    const sums = query.sums ?? [];
    const size = Math.max(0, page.pageSize);
    const offset = Math.max(0, (page.page - 1) * size);
    // A known total bounds the page: the read stops at the last row it allows (a search with
    // few hits no longer reads the rest of the team after them), and reads nothing past the end.
    const limit = searched?.total != null ? Math.max(0, Math.min(size, searched.total - offset)) : size;
    // Rowids first and documents after: the sort then carries small keys, never whole documents.
    const rowids =
      searched?.walk?.() ??
      (limit === 0
        ? []
        : (this.stmt(`SELECT rowid FROM ${searched?.from ?? plan.table} WHERE ${where.sql} ORDER BY ${order} LIMIT ? OFFSET ?`)
            .pluck()
            .all(...where.params, limit, offset) as number[]));
    const byRowid = this.stmt(`SELECT doc FROM ${plan.table} WHERE rowid = ?`).pluck();
    const items = rowids.map((r) => JSON.parse(byRowid.get(r) as string) as Doc);
    // A short first page is the whole set: its count needs no second pass.
    if (offset === 0 && items.length < size && sums.length === 0) return { items, total: items.length, sums: {} };
    if (searched?.total != null) return { items, total: searched.total, sums: {} };
    // Numbers only, as the memory store sums them (a boolean's column would read as 1).
    const sumTerms = sums.map((f) => `total(CASE WHEN json_type(doc, ${jsonPath(f)}) IN ('integer', 'real') THEN json_extract(doc, ${jsonPath(f)}) END)`);
    const totals = this.stmt(`SELECT ${['count(*)', ...sumTerms].join(', ')} FROM ${searched?.countFrom ?? plan.table} WHERE ${where.sql}`)
      .raw()
      .get(...where.params) as number[];
    // Rounded to cents like the memory store: float sums differ in the last bits between the two.
    const sumsOut = Object.fromEntries(sums.map((f, i) => [f, Math.round(totals[i + 1] * 100) / 100]));
    return { items, total: totals[0], sums: sumsOut };
  }

  /** Replaces (or inserts) the whole document; its rowid, and so its place among ties, stays. */
  put(collection: string, doc: Doc): void {
    const plan = this.plan(collection);
    this.stmt(this.upsertSql(plan)).run(...rowOf(plan, doc));
  }

  /** The upsert of a collection's rows, worked out once per plan: a rebuild puts millions. */
  private readonly upserts = new WeakMap<TablePlan, string>();
  private upsertSql(plan: TablePlan): string {
    let sql = this.upserts.get(plan);
    if (!sql) {
      const cols = rowColumns(plan);
      const set = cols.slice(1).map((c) => `${c} = excluded.${c}`);
      this.upserts.set(plan, (sql = `INSERT INTO ${plan.table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')}) ON CONFLICT(_key) DO UPDATE SET ${set.join(', ')}`));
    }
    return sql;
  }

  insertIfAbsent(collection: string, doc: Doc): boolean {
    const plan = this.plan(collection);
    const cols = rowColumns(plan);
    const insert = `INSERT INTO ${plan.table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')}) ON CONFLICT(_key) DO NOTHING`;
    return this.stmt(insert).run(...rowOf(plan, doc)).changes === 1;
  }

  /** Sets fields on every matching document, a chunk at a time in rowid order. */
  updateWhere(collection: string, filter: Filter, set: Doc): void {
    const plan = this.plan(collection);
    if (Object.keys(set).length === 0) return;
    const where = compileWhere(plan, filter);
    const select = this.stmt(`SELECT rowid, doc FROM ${plan.table} WHERE rowid > ? AND ${where.sql} ORDER BY rowid LIMIT ${CHUNK}`);
    const cols = rowColumns(plan).slice(1);
    const update = this.stmt(`UPDATE ${plan.table} SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE rowid = ?`);
    this.transaction(() => {
      let after = -Infinity;
      for (;;) {
        const rows = select.all(after, ...where.params) as Array<{ rowid: number; doc: string }>;
        for (const r of rows) {
          const doc = { ...JSON.parse(r.doc), ...set };
          if (keyOf(plan, doc) !== keyOf(plan, JSON.parse(r.doc))) throw new Error(`${collection}: updateWhere may not change ${plan.def.idField}`);
          update.run(...rowOf(plan, doc).slice(1), r.rowid);
        }
        if (rows.length < CHUNK) return;
        after = rows[rows.length - 1].rowid;
      }
    });
  }

  remove(collection: string, id: number | string): void {
    const plan = this.plan(collection);
    this.stmt(`DELETE FROM ${plan.table} WHERE _key = ?`).run(String(id));
  }

  getCheckpoint(name: string): Position | null {
    const p = this.stmt(`SELECT position FROM ${CHECKPOINTS} WHERE name = ?`).pluck().get(name) as string | undefined;
    return p === undefined ? null : positionFromString(p);
  }

  /** Kept as decimal text: positions are 64-bit and unsigned, beyond a double and SQLite's integer. */
  setCheckpoint(name: string, position: Position): void {
    this.stmt(`INSERT INTO ${CHECKPOINTS} (name, position) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET position = excluded.position`).run(
      name,
      positionToString(position),
    );
  }

  /** Runs fn in one transaction (a savepoint when nested); it commits when fn returns, rolls back when it throws. */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  /** Explicit transaction edges, for callers whose batch spans awaits (the async port). */
  begin(): void {
    this.db.exec('BEGIN IMMEDIATE');
  }
  commit(): void {
    this.db.exec('COMMIT');
  }
  rollback(): void {
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
  }

  /**
   * Bulk mode for a rebuild: the search tables of these collections stop following each row
   * (their triggers are dropped) until endBulk() builds them once, which is several times faster
   * than row by row. A crash in between is repaired by the next define().
   */
  beginBulk(collections: string[] = [...this.plans.keys()]): void {
    this.transaction(() => {
      for (const name of collections) {
        const plan = this.plan(name);
        for (const sql of plan.triggers) this.db.exec(`DROP TRIGGER IF EXISTS ${/TRIGGER IF NOT EXISTS ("(?:[^"]|"")+")/.exec(sql)![1]}`);
        for (const sql of plan.listIndexes) this.db.exec(`DROP INDEX IF EXISTS ${/^CREATE INDEX ("(?:[^"]|"")+")/.exec(sql)![1]}`);
        this.stmt(`UPDATE ${COLLECTIONS} SET bulk = 1 WHERE name = ?`).run(name);
      }
    });
  }

  /**
   * Brings every search table up to date with the rows changed since its last sync, in one
   * transaction (a savepoint inside the caller's): a big batch costs far less per row than the
   * row-by-row upkeep it replaces. `atLeast` skips search tables with fewer rows waiting.
   * Answers the rows synced. Searches are exact either way (sqlite-query.ts hitsOf).
   */
  syncSearch(atLeast = 1): number {
    let synced = 0;
    // IMMEDIATE: it reads before it writes, and another connection may write in between.
    this.db.transaction(() => {
      for (const plan of this.plans.values()) {
        for (const s of plan.searches) {
          const waiting = this.stmt(`SELECT count(*) FROM ${s.pending}`).pluck().get() as number;
          if (waiting < atLeast) continue;
          this.syncOne(plan, s);
          synced += waiting;
        }
      }
    }).immediate();
    return synced;
  }

  private syncOne(plan: TablePlan, s: SearchPlan): void {
    this.syncGrams(plan, s);
    this.stmt(`INSERT INTO ${s.fts} (${s.fts}, rowid, ${s.column}) SELECT 'delete', row, old FROM ${s.pending} WHERE old IS NOT NULL ORDER BY row`).run();
    this.stmt(`INSERT INTO ${s.fts} (rowid, ${s.column}) SELECT p.row, t.${s.column} FROM ${s.pending} p CROSS JOIN ${plan.table} t ON t.rowid = p.row ORDER BY p.row`).run();
    this.stmt(`DELETE FROM ${s.pending}`).run();
  }

  /**
   * A collection laid out before the gram tables (session 8) gets them without a relayout: each
   * is created and counted from the rows, once the search tables have taken in the rows waiting
   * for them (the counts follow what the search tables hold). In bulk mode the bulk load's end counts them.
   */
  private addGrams(plan: TablePlan, layout: string): void {
    for (const s of plan.searches) {
      this.db.exec(plan.ddl.find((sql) => sql.startsWith(`CREATE TABLE ${s.grams} `))!);
      if (this.inBulk(plan.def.name)) continue;
      this.syncOne(plan, s);
      this.rebuildGrams(plan, s);
    }
    this.stmt(`UPDATE ${COLLECTIONS} SET layout = ? WHERE name = ?`).run(layout, plan.def.name);
  }

  /**
   * The gram table follows the waiting rows as the FTS5 table does: each row's old text (the one
   * the tables hold) taken away, its text now added. Fed grouped by team, so each team's grams
   * are written once.
   */
  private syncGrams(plan: TablePlan, s: SearchPlan): void {
    const length = markerLength(s);
    if (length === 0) return;
    const rows = this.stmt(`SELECT p.old, t.${s.column} FROM ${s.pending} p LEFT JOIN ${plan.table} t ON t.rowid = p.row`).raw().all() as Array<[string | null, string | null]>;
    const texts: Array<[string, 1 | -1]> = [];
    for (const [old, now] of rows) {
      if (old) texts.push([old, -1]);
      if (now) texts.push([now, 1]);
    }
    // Grouped by team (the marker each text begins with); the order within a team does not matter.
    const byTeam = texts.map(([text, sign]) => ({ team: text.slice(0, length), text, sign })).sort((a, b) => (a.team < b.team ? -1 : a.team > b.team ? 1 : 0));
    const counter = new GramCounter(length, this.gramWriter(s));
    for (const { text, sign } of byTeam) counter.add(text, sign);
    counter.flush();
  }

  /** Adds a change to a team's gram count; a count that reaches 0 goes. */
  private gramWriter(s: SearchPlan): (marker: string, gram: string, delta: number) => void {
    const upsert = this.stmt(`INSERT INTO ${s.grams} (m, g, n) VALUES (?, ?, ?) ON CONFLICT(m, g) DO UPDATE SET n = n + excluded.n`);
    const drop = this.stmt(`DELETE FROM ${s.grams} WHERE m = ? AND g = ? AND n = 0`);
    return (marker, gram, delta) => {
      upsert.run(marker, gram, delta);
      if (delta < 0) drop.run(marker, gram);
    };
  }

  /**
   * Counts every row's grams afresh (a rebuild's end), a team at a time through the scan index:
   * a team's rows are read whole before its counts are written (better-sqlite3 writes nothing
   * while a statement iterates), so memory holds one team's counts, never the rows.
   */
  private rebuildGrams(plan: TablePlan, s: SearchPlan): void {
    this.db.exec(`DELETE FROM ${s.grams}`);
    const length = markerLength(s);
    if (length === 0) return;
    const changes: Array<[string, string, number]> = [];
    const counter = new GramCounter(length, (m, g, n) => changes.push([m, g, n]));
    const write = this.gramWriter(s);
    const cols = s.where.map((f) => plan.columns.get(f)!);
    const tuple = `(${cols.join(', ')})`;
    const from = `${plan.table} INDEXED BY ${s.scanIndex}`;
    const first = this.db.prepare(`SELECT ${cols.join(', ')} FROM ${from} WHERE ${cols.map((c) => `${c} IS NOT NULL`).join(' AND ')} ORDER BY ${cols.join(', ')} LIMIT 1`).raw();
    const next = this.db.prepare(`SELECT ${cols.join(', ')} FROM ${from} WHERE ${tuple} > (${cols.map(() => '?').join(', ')}) ORDER BY ${cols.join(', ')} LIMIT 1`).raw();
    const texts = this.db.prepare(`SELECT ${s.column} FROM ${from} WHERE ${cols.map((c) => `${c} = ?`).join(' AND ')}`).pluck();
    for (let team = first.get() as unknown[] | undefined; team; team = next.get(...team) as unknown[] | undefined) {
      for (const text of texts.iterate(...team)) counter.add(text as string, 1);
      counter.flush();
      for (const [m, g, n] of changes) write(m, g, n);
      changes.length = 0;
    }
  }

  /** Whether the collection is in bulk mode (its search tables wait for endBulk). */
  inBulk(name: string): boolean {
    return this.stmt(`SELECT bulk FROM ${COLLECTIONS} WHERE name = ?`).pluck().get(name) === 1;
  }

  endBulk(collections: string[] = [...this.plans.keys()]): void {
    this.transaction(() => {
      for (const name of collections) this.finishBulk(this.plan(name));
    });
  }

  /** The schema version recorded for a read model (or projector), null when none is. */
  schemaVersion(name: string): number | null {
    return (this.stmt(`SELECT version FROM ${VERSIONS} WHERE name = ?`).pluck().get(name) as number | undefined) ?? null;
  }

  setSchemaVersion(name: string, version: number): void {
    this.stmt(`INSERT INTO ${VERSIONS} (name, version) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET version = excluded.version`).run(name, version);
  }

  /** Drops a collection with its indexes and search tables; define() creates it afresh. */
  dropCollection(name: string): void {
    this.transaction(() => {
      this.dropObjects(name);
      this.stmt(`DELETE FROM ${COLLECTIONS} WHERE name = ?`).run(name);
    });
    this.plans.delete(name);
    this.statements.clear();
  }

  /** Drops every collection, checkpoint and schema version. */
  reset(): void {
    const names = this.stmt(`SELECT name FROM ${COLLECTIONS}`).pluck().all() as string[];
    for (const n of names) this.dropCollection(n);
    this.db.exec(`DELETE FROM ${CHECKPOINTS}; DELETE FROM ${VERSIONS};`);
  }

  /**
   * The WAL checkpoint for a connection that checkpoints in the stead of one that does not (the
   * inline projection's: runtime/inline-projection.ts). First PASSIVE: it copies what the WAL
   * holds into the database file as far as no reader still needs it, waiting for no one.
   *
   * That alone does not bound the WAL under steady writes. A writer starts the WAL over only when
   * its transaction begins with every frame copied, and the other thread's commits keep adding
   * frames while the copy runs, so the file would grow for as long as they go on. Once it holds
   * `restartAt` frames, a RESTART follows: it takes the write lock, copies the few frames added
   * since the PASSIVE one, and waits for the readers still on the WAL, so the next write starts
   * it over. It waits at most `waitMs` for the lock and for those readers (the connection's busy
   * timeout is set back after), and goes on as a PASSIVE one if that runs out.
   */
  checkpointWal(restartAt = 4_000, waitMs = 50): void {
    const [passive] = this.db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number }>;
    if ((passive?.log ?? 0) < restartAt) return;
    const busyTimeout = Number(this.db.pragma('busy_timeout', { simple: true }));
    this.db.pragma(`busy_timeout = ${waitMs}`);
    try {
      this.db.pragma('wal_checkpoint(RESTART)');
    } finally {
      this.db.pragma(`busy_timeout = ${busyTimeout}`);
    }
  }

  /**
   * Ends a `fresh` file's build: WAL from here on, as every other connection expects, and the
   * connection closed. It was written without syncs: the caller syncs it before moving it into place.
   */
  finishFresh(): void {
    this.db.pragma('journal_mode = WAL');
    this.close();
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  plan(name: string): TablePlan {
    const p = this.plans.get(name);
    if (!p) throw new Error(`unknown read-model collection ${name}`);
    return p;
  }

  /** Prepared once per distinct SQL text; queries differ only by filter shape, so the set stays small. */
  private stmt(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) {
      if (this.statements.size >= 1_000) this.statements.clear();
      this.statements.set(sql, (s = this.db.prepare(sql)));
    }
    return s;
  }

  private finishBulk(plan: TablePlan): void {
    // Rebuilt as one segment, then optimised: later row-by-row changes otherwise merge into
    // that segment again and again (measured: three times the cost per update).
    // The rebuild reads every row as it is now: nothing is left waiting for a sync.
    // Its terms gather in a hash of FTS5_BULK_HASH bytes meanwhile (1 MiB by default, which
    // flushes a segment for every MiB and merges them again and again), set back after.
    for (const s of plan.searches)
      this.db.exec(
        `INSERT INTO ${s.fts}(${s.fts}, rank) VALUES ('hashsize', ${FTS5_BULK_HASH}); INSERT INTO ${s.fts}(${s.fts}) VALUES ('rebuild'); ` +
          `INSERT INTO ${s.fts}(${s.fts}) VALUES ('optimize'); INSERT INTO ${s.fts}(${s.fts}, rank) VALUES ('hashsize', ${FTS5_HASH}); DELETE FROM ${s.pending};`,
      );
    for (const sql of plan.listIndexes) this.db.exec(sql.replace(/^CREATE INDEX /, 'CREATE INDEX IF NOT EXISTS '));
    // After the scan indexes: the gram count reads the rows through them, a team at a time.
    for (const s of plan.searches) this.rebuildGrams(plan, s);
    for (const sql of plan.triggers) this.db.exec(sql);
    this.stmt(`UPDATE ${COLLECTIONS} SET bulk = 0 WHERE name = ?`).run(plan.def.name);
  }

  /** The table and everything built on it: indexes and triggers go with it, search tables by name. */
  private dropObjects(name: string): void {
    const tablesNamed = (prefix: string, sql: string) =>
      this.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE ? AND substr(name, 1, ?) = ?`).pluck().all(sql, prefix.length, prefix) as string[];
    const search = [...tablesNamed(`${name}__fts`, 'CREATE VIRTUAL TABLE%'), ...tablesNamed(`${name}__pending`, 'CREATE TABLE%'), ...tablesNamed(`${name}__grams`, 'CREATE TABLE%')];
    for (const t of search) this.db.exec(`DROP TABLE ${quoteId(t)}`);
    this.db.exec(`DROP TABLE IF EXISTS ${quoteId(name)}`);
  }

  /** A table laid out for another definition, moved to the new layout from its own documents. */
  private relayout(plan: TablePlan, layout: string): void {
    const name = plan.def.name;
    const old = quoteId(`${name}__relayout`);
    this.db.exec(`DROP TABLE IF EXISTS ${old}`);
    this.db.exec(`CREATE TABLE ${old} AS SELECT rowid AS r, doc FROM ${plan.table}`);
    this.dropObjects(name);
    this.statements.clear();
    for (const sql of plan.ddl) this.db.exec(sql);
    const cols = rowColumns(plan);
    const insert = this.db.prepare(`INSERT INTO ${plan.table} (rowid, ${cols.join(', ')}) VALUES (?, ${cols.map(() => '?').join(', ')})`);
    const select = this.db.prepare(`SELECT r, doc FROM ${old} WHERE r > ? ORDER BY r LIMIT ${CHUNK}`);
    for (let after = -Infinity; ; ) {
      const rows = select.all(after) as Array<{ r: number; doc: string }>;
      for (const row of rows) insert.run(row.r, ...rowOf(plan, JSON.parse(row.doc)));
      if (rows.length < CHUNK) break;
      after = rows[rows.length - 1].r;
    }
    this.db.exec(`DROP TABLE ${old}`);
    this.finishBulk(plan);
    this.stmt(`UPDATE ${COLLECTIONS} SET layout = ? WHERE name = ?`).run(layout, name);
  }
}

/** Whether a filter holds a search (`contains`), at any depth. */
function holdsText(filter: Filter | undefined): boolean {
  if (!filter) return false;
  if (filter.op === 'contains') return true;
  return (filter.op === 'and' || filter.op === 'or') && filter.filters.some(holdsText);
}

/** The layout the collection had before its searches had gram tables. */
function layoutBeforeGrams(plan: TablePlan): string | null {
  if (!plan.searches.length) return null;
  const grams = new Set(plan.searches.map((s) => `CREATE TABLE ${s.grams} `));
  return JSON.stringify([plan.ddl.filter((sql) => ![...grams].some((g) => sql.startsWith(g))), plan.triggers]);
}

/** Sums as the memory store makes them: numbers only, rounded to cents. */
function sumsOf(items: Doc[], fields: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of fields) {
    let s = 0;
    for (const d of items) if (typeof d[f] === 'number') s += d[f] as number;
    out[f] = Math.round(s * 100) / 100;
  }
  return out;
}
