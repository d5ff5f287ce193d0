import type Database from 'better-sqlite3';

/** Rows a statement writes at once: past about 32, a row cost no less (measured on the rebuild's rows). */
export const PUT_BATCH = 64;

/**
 * The puts of a file built from nothing (an offline rebuild, sqlite-core.ts `fresh`), written
 * PUT_BATCH rows to a statement instead of one: most of a small row's insert was the call into
 * SQLite and its statement's binding and reset, not the b-tree (an activity entry 2.0 -> 1.1 µs,
 * a constituent's create 2.8 -> 2.3 µs). The statement is the same upsert once per row, so SQLite
 * writes the rows in the same order with the same rowids, a later row of a key updating the
 * earlier one, as one statement a row would.
 *
 * Rows wait here until a batch is whole, another collection is put, or the connection does
 * anything else (sqlite-core.ts flushes before every other statement and at each transaction's
 * end; a transaction rolled back drops what waits). So every read, count, index build or commit
 * sees every put before it, as without the batch.
 */
export class PutBatch {
  /** The one-row upsert of the rows waiting: a batch holds one collection's rows, in order. */
  private sql: string | null = null;
  private one: Database.Statement | null = null;
  private many: Database.Statement | null = null;
  private readonly values: unknown[] = [];
  private rows = 0;
  private readonly statements = new Map<string, { one: Database.Statement; many: Database.Statement }>();

  constructor(private readonly db: Database.Database) {}

  /** Adds a row (its values in the order of `sql`'s columns); `sql` is its one-row upsert, `INSERT ... VALUES (?, ...) <conflict clause>`. */
  add(sql: string, row: unknown[]): void {
    if (this.sql !== sql) {
      this.flush();
      let s = this.statements.get(sql);
      if (!s) this.statements.set(sql, (s = { one: this.db.prepare(sql), many: this.db.prepare(manyRows(sql, PUT_BATCH)) }));
      this.sql = sql;
      this.one = s.one;
      this.many = s.many;
    }
    for (let i = 0; i < row.length; i++) this.values.push(row[i]);
    if (++this.rows === PUT_BATCH) {
      try {
        this.many!.run(this.values);
      } finally {
        // Written or failed, these rows wait no longer (a failure ends the caller's transaction).
        this.drop();
      }
    }
  }

  /** Writes what waits. */
  flush(): void {
    if (!this.rows) return;
    const width = this.values.length / this.rows;
    const values = this.values.splice(0);
    this.rows = 0;
    for (let i = 0; i < values.length; i += width) this.one!.run(values.slice(i, i + width));
  }

  /** Forgets what waits (its transaction rolled back). */
  drop(): void {
    this.values.length = 0;
    this.rows = 0;
  }

  /** Forgets the statements too (they are finalized with the connection's others). */
  forget(): void {
    this.drop();
    this.sql = null;
    this.one = this.many = null;
    this.statements.clear();
  }
}

/** `INSERT ... VALUES (?, ?) ON CONFLICT ...` with its row of placeholders repeated `n` times. */
function manyRows(sql: string, n: number): string {
  const at = sql.indexOf(' VALUES (');
  const end = sql.indexOf(')', at);
  if (at < 0 || end < 0) throw new Error(`not a one-row insert: ${sql}`);
  const row = sql.slice(at + ' VALUES '.length, end + 1);
  return `${sql.slice(0, at)} VALUES ${Array.from({ length: n }, () => row).join(', ')}${sql.slice(end + 1)}`;
}
