import Database from 'better-sqlite3';
import { type Position, positionFromString, positionToString } from '../../domain/shared/events.js';
import type { CollectionDef, Doc, Filter, JsonShape, Page, Query } from './port.js';
import { CHECKPOINTS, type Connection } from './sqlite-connection.js';
import { Finder } from './sqlite-find.js';
import { adoptSearchIndexes, beginBulk, createMetaTables, dropAll, dropCollection, endBulk, inBulk, layOut, schemaVersion, setSchemaVersion } from './sqlite-layout.js';
import { compileWhere, FOLD_FUNCTION, fold } from './sqlite-query.js';
import { docColumns, docOf, fieldExpr, keyOf, planOf, rowColumns, rowOf, type TablePlan } from './sqlite-schema.js';
import { jsonView, type JsonView } from './sqlite-json.js';
import { PutBatch } from './sqlite-put-batch.js';
import { syncSearch } from './sqlite-search-sync.js';
import { boundWal, READ_MODELS_WAL } from './sqlite-wal.js';

/** Rows read per step where a whole collection is walked, so memory stays bounded. */
const CHUNK = 2_000;

/**
 * The SQLite read store's synchronous core: every method is a plain call on better-sqlite3, so
 * it can run on the main thread behind the async port (sqlite.ts) or inside a worker thread
 * that applies a batch of events in one transaction. Its jobs beside CRUD and checkpoints live
 * in files of their own: the layout and versions (sqlite-layout.ts), the search index's sync
 * (sqlite-search-sync.ts), queries (sqlite-find.ts) and the WAL's bound (sqlite-wal.ts).
 *
 * Durability: WAL with synchronous=NORMAL. A power cut may lose the last transactions, never
 * corrupt the file; read models are rebuildable from the log, and each projector's checkpoint is
 * stored in this same database and written in the same transaction as its changes (use
 * transaction() or begin()/commit()), so what survives is always consistent with its checkpoint
 * and the projector resumes from there.
 */
export class SqliteReadCore implements Connection {
  readonly db: Database.Database;
  readonly plans = new Map<string, TablePlan>();
  private readonly statements = new Map<string, Database.Statement>();
  private readonly finder: Finder;
  /** A fresh file's puts, written a batch to a statement (sqlite-put-batch.ts); flushed before anything else. */
  private readonly batch: PutBatch | null;

  /**
   * `fresh`: a new file being built whole (see below), WAL-journalled once done (`finishFresh`).
   *
   * `laidOutElsewhere`: a connection to a database another connection (the projector thread)
   * lays out: define() then plans the collection without touching the file. The main thread's
   * reading connection is one.
   */
  constructor(
    path: string,
    private readonly options: { laidOutElsewhere?: boolean; fresh?: boolean } = {},
  ) {
    this.db = new Database(path);
    // Writers of another thread or process hold the lock for one transaction at a time.
    this.db.pragma('busy_timeout = 10000');
    // A removed or rewritten document leaves no old bytes in the file's free space: an erased
    // person's values are gone once the WAL is checkpointed (decisions.md §17).
    this.db.pragma('secure_delete = ON');
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
    // A file built whole gets 256 MiB: its look-up indexes take rows in random order, and with
    // the smaller cache at a million rows most inserts read and write back a page.
    this.db.pragma(`cache_size = ${options.fresh ? -262144 : -65536}`);
    this.batch = options.fresh ? new PutBatch(this.db) : null;
    this.db.function(FOLD_FUNCTION, { deterministic: true }, fold);
    this.finder = new Finder(this, (name) => this.inBulk(name));
    if (!options.laidOutElsewhere) createMetaTables(this.db);
  }

  /**
   * Creates the collection's table, indexes and search tables, or checks them (sqlite-layout.ts);
   * on a connection to a database laid out elsewhere, only plans it.
   */
  define(def: CollectionDef): void {
    this.batch?.flush();
    if (this.plans.has(def.name)) return;
    const plan = planOf(def);
    if (!this.options.laidOutElsewhere) layOut(this, plan);
    this.plans.set(def.name, plan);
  }

  /** Bumped by every write through this connection, and when another connection's commit is seen (changeMark). */
  private mark = 0;
  private seenDataVersion: number | null = null;

  /**
   * A number that changes whenever what this connection reads may have changed since it was last
   * asked: a write through this connection, or a commit by any other (the projector thread,
   * another process), which SQLite's data_version tells with one pragma and
   * no table read (https://sqlite.org/pragma.html#pragma_data_version). Equal marks: nothing changed.
   */
  changeMark(): number {
    const version = this.stmt('PRAGMA data_version').pluck().get() as number;
    if (version !== this.seenDataVersion) {
      this.seenDataVersion = version;
      this.mark++;
    }
    return this.mark;
  }

  get(collection: string, id: number | string): Doc | null {
    const plan = this.plan(collection);
    const row = this.stmt(this.getSql(plan)).raw().get(String(id)) as unknown[] | undefined;
    return row ? docOf(plan, row) : null;
  }

  /**
   * One document as JSON text (sqlite-json.ts). Its read is compiled once per collection and
   * shape, with its statement in raw mode, and kept until the statements are forgotten (a
   * collection dropped or laid out again): every single read asks.
   */
  getJson(collection: string, id: number | string, shape: JsonShape): { json: string; picked: unknown[] } | null {
    // Its cached statement reads the table directly: the puts still batched must be there first.
    this.batch?.flush();
    let reads = this.jsonReads.get(collection);
    if (!reads) this.jsonReads.set(collection, (reads = new WeakMap()));
    let read = reads.get(shape);
    if (!read || read.generation !== this.generation) {
      const view = jsonView(this.plan(collection), shape);
      reads.set(shape, (read = { view, statement: this.stmt(view.sql).raw(), generation: this.generation }));
    }
    const row = read.statement.get(String(id)) as unknown[] | undefined;
    return row ? read.view.read(row) : null;
  }
  private readonly jsonReads = new Map<string, WeakMap<JsonShape, { view: JsonView; statement: Database.Statement; generation: number }>>();
  /** Bumped whenever the prepared statements are dropped. */
  private generation = 0;

  /** A collection's read by id, worked out once per plan: every single read and key check asks. */
  private readonly gets = new WeakMap<TablePlan, string>();
  private getSql(plan: TablePlan): string {
    let sql = this.gets.get(plan);
    if (!sql) this.gets.set(plan, (sql = `SELECT ${docColumns(plan)} FROM ${plan.table} WHERE _key = ?`));
    return sql;
  }

  find(query: Query): Page {
    return this.finder.find(this.plan(query.collection), query);
  }

  /** ReadStore.scan: one statement, ordered by the key's column, which the collection's index serves. */
  scan(collection: string, filter: Filter, key: string, limit: number): Doc[] {
    const plan = this.plan(collection);
    const where = compileWhere(plan, filter);
    const rows = this.stmt(`SELECT ${docColumns(plan)} FROM ${plan.table} WHERE ${where.sql} ORDER BY ${fieldExpr(plan, key)} LIMIT ?`).raw().all(...where.params, limit) as unknown[][];
    return rows.map((r) => docOf(plan, r));
  }

  /** Replaces (or inserts) the whole document; its rowid, and so its place among ties, stays. */
  put(collection: string, doc: Doc): void {
    const plan = this.plan(collection);
    this.mark++;
    if (this.batch) this.batch.add(this.upsertSql(plan), rowOf(plan, doc));
    else this.stmt(this.upsertSql(plan)).run(...rowOf(plan, doc));
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
    this.mark++;
    return this.stmt(insert).run(...rowOf(plan, doc)).changes === 1;
  }

  /** Sets fields on every matching document, a chunk at a time in rowid order. */
  updateWhere(collection: string, filter: Filter, set: Doc): void {
    const plan = this.plan(collection);
    if (Object.keys(set).length === 0) return;
    this.mark++;
    const where = compileWhere(plan, filter);
    const select = this.stmt(`SELECT rowid, ${docColumns(plan)} FROM ${plan.table} WHERE rowid > ? AND ${where.sql} ORDER BY rowid LIMIT ${CHUNK}`).raw();
    const cols = rowColumns(plan).slice(1);
    const update = this.stmt(`UPDATE ${plan.table} SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE rowid = ?`);
    this.transaction(() => {
      let after = -Infinity;
      for (;;) {
        const rows = select.all(after, ...where.params) as unknown[][];
        for (const r of rows) {
          const was = docOf(plan, r.slice(1));
          const doc = { ...was, ...set };
          if (keyOf(plan, doc) !== keyOf(plan, was)) throw new Error(`${collection}: updateWhere may not change ${plan.def.idField}`);
          update.run(...rowOf(plan, doc).slice(1), r[0]);
        }
        if (rows.length < CHUNK) return;
        after = rows[rows.length - 1][0] as number;
      }
    });
  }

  remove(collection: string, id: number | string): void {
    const plan = this.plan(collection);
    this.mark++;
    this.stmt(`DELETE FROM ${plan.table} WHERE _key = ?`).run(String(id));
  }

  getCheckpoint(name: string): Position | null {
    const p = this.stmt(`SELECT position FROM ${CHECKPOINTS} WHERE name = ?`).pluck().get(name) as string | undefined;
    return p === undefined ? null : positionFromString(p);
  }

  /** Kept as decimal text: positions are 64-bit and unsigned, beyond a double and SQLite's integer. */
  setCheckpoint(name: string, position: Position): void {
    this.setCheckpoints([[name, position]]);
  }

  /** One statement for them all: a live step moves every projector's checkpoint, several times a second. */
  setCheckpoints(checkpoints: ReadonlyArray<readonly [string, Position]>): void {
    if (!checkpoints.length) return;
    const values = checkpoints.map(() => '(?, ?)').join(', ');
    this.stmt(`INSERT INTO ${CHECKPOINTS} (name, position) VALUES ${values} ON CONFLICT(name) DO UPDATE SET position = excluded.position`).run(
      checkpoints.flatMap(([name, position]) => [name, positionToString(position)]),
    );
  }

  /**
   * SQLite's data_version: it changes when another connection (another thread or process) has
   * committed since this one last looked, never for this connection's own commits.
   */
  dataVersion(): number {
    return this.stmt('PRAGMA data_version').pluck().get() as number;
  }

  /** Runs fn in one transaction (a savepoint when nested); it commits when fn returns, rolls back when it throws. */
  transaction<T>(fn: () => T): T {
    const batch = this.batch;
    if (!batch) return this.db.transaction(fn)();
    batch.flush();
    try {
      return this.db.transaction(() => {
        const result = fn();
        batch.flush();
        return result;
      })();
    } catch (err) {
      // What the transaction (or savepoint) put and had not written is rolled back with it.
      batch.drop();
      throw err;
    }
  }

  /** Explicit transaction edges, for callers whose batch spans awaits (the async port). */
  begin(): void {
    this.batch?.flush();
    this.db.exec('BEGIN IMMEDIATE');
  }
  commit(): void {
    this.batch?.flush();
    this.db.exec('COMMIT');
  }
  rollback(): void {
    this.batch?.drop();
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
  }

  /** Bulk mode for a rebuild (sqlite-layout.ts): the search tables wait for endBulk(). */
  beginBulk(collections: string[] = [...this.plans.keys()], options: { offline?: boolean } = {}): void {
    this.batch?.flush();
    beginBulk(this, collections.map((n) => this.plan(n)), options.offline);
  }

  inBulk(name: string): boolean {
    return inBulk(this, name);
  }

  /** `searchesBuilt`: their search indexes are built elsewhere, taken by adoptSearchIndexes after. */
  endBulk(collections: string[] = [...this.plans.keys()], options: { offline?: boolean; searchesBuilt?: boolean } = {}): void {
    this.batch?.flush();
    endBulk(this, collections.map((n) => this.plan(n)), options.offline, options.searchesBuilt);
  }

  /** The search indexes of `collections` built in the file `file` (sqlite-layout.ts adoptSearchIndexes). */
  adoptSearchIndexes(collections: string[], file: string): void {
    this.batch?.flush();
    this.db.prepare('ATTACH DATABASE ? AS searches').run(file);
    this.db.unsafeMode(true);
    try {
      adoptSearchIndexes(this, collections.map((n) => this.plan(n)), 'searches');
    } finally {
      this.db.unsafeMode(false);
      this.db.exec('DETACH DATABASE searches');
    }
  }

  /** Brings the search tables up to date (sqlite-search-sync.ts); answers the rows synced. */
  syncSearch(atLeast = 1): number {
    this.batch?.flush();
    return syncSearch(this, atLeast);
  }

  schemaVersion(name: string): number | null {
    this.batch?.flush();
    return schemaVersion(this, name);
  }

  setSchemaVersion(name: string, version: number): void {
    this.batch?.flush();
    setSchemaVersion(this, name, version);
  }

  dropCollection(name: string): void {
    this.batch?.flush();
    this.mark++;
    dropCollection(this, name);
  }

  /** Drops every collection, checkpoint and schema version. */
  reset(): void {
    this.batch?.flush();
    this.mark++;
    dropAll(this);
  }

  /**
   * The WAL checkpoint, passive, run by the projector thread between its steps, bounded as
   * sqlite-wal.ts says.
   */
  checkpointWal(restartAt: number = READ_MODELS_WAL.restartAt, waitMs: number = READ_MODELS_WAL.waitMs): void {
    this.batch?.flush();
    boundWal(this.db, restartAt, waitMs);
  }

  /**
   * Ends a `fresh` file's build: WAL from here on, as every other connection expects, and the
   * connection closed. It was written without syncs: the caller syncs it before moving it into place.
   */
  finishFresh(): void {
    this.batch?.flush();
    this.db.pragma('journal_mode = WAL');
    this.close();
  }

  close(): void {
    if (!this.db.open) return;
    try {
      this.batch?.flush();
    } finally {
      this.db.close();
    }
  }

  plan(name: string): TablePlan {
    const p = this.plans.get(name);
    if (!p) throw new Error(`unknown read-model collection ${name}`);
    return p;
  }

  /** Prepared once per distinct SQL text; queries differ only by filter shape, so the set stays small. */
  stmt(sql: string): Database.Statement {
    // Every statement but the batch's own sees the puts before it.
    this.batch?.flush();
    let s = this.statements.get(sql);
    if (!s) {
      if (this.statements.size >= 1_000) this.forgetStatements();
      this.statements.set(sql, (s = this.db.prepare(sql)));
    }
    return s;
  }

  forgetStatements(): void {
    this.batch?.flush();
    this.batch?.forget();
    this.generation++;
    this.statements.clear();
  }
}
