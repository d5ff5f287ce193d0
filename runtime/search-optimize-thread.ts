/*
 * The search index's merge for an erasure (search-optimize.ts): its own connection to the read
 * models' file, every FTS5 table merged whole, one answer, then it exits.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { optimizeSearchTables } from '../projections/store/sqlite-search-sync.js';
import type { FromOptimizer, OptimizeSettings } from './search-optimize.js';

if (!parentPort) throw new Error('search-optimize-thread runs as a worker thread (search-optimize.ts)');
const settings = workerData as OptimizeSettings;
let answer: FromOptimizer;
try {
  const db = new Database(settings.file, { fileMustExist: true });
  try {
    // The projector thread commits between its steps; the merge waits for the one under way.
    db.pragma(`busy_timeout = ${settings.busyTimeoutMs}`);
    // The merged segments' pages are freed: zeroed, not left with the grams they held.
    db.pragma('secure_delete = ON');
    answer = { tables: optimizeSearchTables(db) };
  } finally {
    db.close();
  }
} catch (err) {
  answer = { error: err instanceof Error ? err.message : String(err) };
}
parentPort.postMessage(answer);
