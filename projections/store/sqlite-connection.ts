import type Database from 'better-sqlite3';
import { META_PREFIX, type TablePlan } from './sqlite-schema.js';

/** The store's own tables: each collection's layout, the projectors' checkpoints and versions. */
export const COLLECTIONS = `${META_PREFIX}collections`;
export const CHECKPOINTS = `${META_PREFIX}checkpoints`;
export const VERSIONS = `${META_PREFIX}versions`;

/**
 * What the jobs of the SQLite read store share (sqlite-core.ts CRUD and checkpoints,
 * sqlite-layout.ts layout and versions, sqlite-search-sync.ts the search index, sqlite-find.ts
 * queries): one connection, its statements prepared once, and the collections' plans.
 */
export interface Connection {
  readonly db: Database.Database;
  readonly plans: Map<string, TablePlan>;
  /** Prepared once per distinct SQL text. */
  stmt(sql: string): Database.Statement;
  /** Forgets every prepared statement: a table they read was dropped or laid out again. */
  forgetStatements(): void;
  /** Runs fn in one transaction (a savepoint when nested). */
  transaction<T>(fn: () => T): T;
}
