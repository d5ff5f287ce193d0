import type { Connection } from './sqlite-connection.js';
import type { Doc, Filter, Page, Query } from './port.js';
import { compileWhere } from './sqlite-query.js';
import { planSearched } from './sqlite-search.js';
import { docColumns, docOf, docPath, orderTerms, type TablePlan } from './sqlite-schema.js';

/**
 * The store's queries: a list, a page with its total and sums, and a search through its index.
 * Searches of one or two characters read the team's whole slice of an index for their total, so
 * their pages are kept until the database changes (a type-ahead's first keys repeat).
 */
export class Finder {
  private readonly shortSearches = new Map<string, { version: string; page: Page }>();

  constructor(
    private readonly conn: Connection,
    private readonly inBulk: (collection: string) => boolean,
  ) {}

  /**
   * One query, read from one snapshot: a search counts from its index, then corrects for the rows
   * waiting for the sync, then reads its page, and another connection (the projector thread)
   * committing a sync in between would otherwise make the total miss or count a row twice.
   */
  find(plan: TablePlan, query: Query): Page {
    const { db } = this.conn;
    return db.inTransaction ? this.findNow(plan, query) : db.transaction(() => this.findNow(plan, query)).deferred();
  }

  private findNow(tablePlan: TablePlan, query: Query): Page {
    const { stmt } = this;
    // In bulk mode (a catch-up far behind) the search tables and the scan indexes wait for its
    // end: a search reads the rows, slowly but exactly (reads wait for the catch-up after a
    // start). Only a query holding a search asks, so lists and look-ups pay nothing for it.
    const plan = holdsText(query.filter) && this.inBulk(query.collection) ? { ...tablePlan, searches: [] } : tablePlan;
    const where = compileWhere(plan, query.filter);
    // Ties go by rowid (the order documents came in), except after the id, which has none: its
    // index then serves the order alone (a scan index holds the search text between id and rowid).
    const sort = query.sort ?? [];
    const order = [...orderTerms(plan, sort), ...(sort.some((k) => k.field === plan.def.idField) ? [] : ['rowid'])].join(', ');
    const sums = query.sums ?? [];
    if (!query.page) {
      const rows = stmt(`SELECT ${docColumns(plan)} FROM ${plan.table} WHERE ${where.sql} ORDER BY ${order}`).raw().all(...where.params) as unknown[][];
      const items = rows.map((r) => docOf(plan, r));
      return { items, total: items.length, sums: sumsOf(items, sums) };
    }
    const searched = planSearched(plan, query, stmt);
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

  private readonly stmt = (sql: string) => this.conn.stmt(sql);

  /** Changes whenever anything commits: another connection (data_version) or this one (total_changes). */
  private version(): string {
    return `${this.stmt('PRAGMA data_version').pluck().get()}:${this.stmt('SELECT total_changes()').pluck().get()}`;
  }

  private findPage(plan: TablePlan, query: Query, where: ReturnType<typeof compileWhere>, order: string, searched: ReturnType<typeof planSearched>): Page {
    const { stmt } = this;
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
        : (stmt(`SELECT rowid FROM ${searched?.from ?? plan.table} WHERE ${where.sql} ORDER BY ${order} LIMIT ? OFFSET ?`)
            .pluck()
            .all(...where.params, limit, offset) as number[]));
    const byRowid = stmt(`SELECT ${docColumns(plan)} FROM ${plan.table} WHERE rowid = ?`).raw();
    const items = rowids.map((r) => docOf(plan, byRowid.get(r) as unknown[]));
    // A short first page is the whole set: its count needs no second pass.
    if (offset === 0 && items.length < size && sums.length === 0) return { items, total: items.length, sums: {} };
    if (searched?.total != null) return { items, total: searched.total, sums: {} };
    // Numbers only, as the memory store sums them (a boolean's column would read as 1).
    // A number a column holds is not in the JSON (storedDoc); a boolean always is, so a column's 1 there is a number.
    const sumTerms = sums.map((f) => {
      const column = plan.columns.get(f);
      const fromColumn = column ? ` WHEN json_type(doc, ${docPath(plan, f)}) IS NULL AND typeof(${column}) IN ('integer', 'real') THEN ${column}` : '';
      return `total(CASE WHEN json_type(doc, ${docPath(plan, f)}) IN ('integer', 'real') THEN json_extract(doc, ${docPath(plan, f)})${fromColumn} END)`;
    });
    const totals = stmt(`SELECT ${['count(*)', ...sumTerms].join(', ')} FROM ${searched?.countFrom ?? plan.table} WHERE ${where.sql}`)
      .raw()
      .get(...where.params) as number[];
    // Rounded to cents like the memory store: float sums differ in the last bits between the two.
    const sumsOut = Object.fromEntries(sums.map((f, i) => [f, Math.round(totals[i + 1] * 100) / 100]));
    return { items, total: totals[0], sums: sumsOut };
  }
}

/** Whether a filter holds a search (`contains`), at any depth. */
function holdsText(filter: Filter | undefined): boolean {
  if (!filter) return false;
  if (filter.op === 'contains') return true;
  return (filter.op === 'and' || filter.op === 'or') && filter.filters.some(holdsText);
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
