/*
 * Empties one SQLite file's WAL for an erasure (wal-truncate.ts): its own connection, the
 * checkpoint retried until no reader holds an older snapshot, one answer, then it exits.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { truncateWal } from '../eventlog/erase.js';
import type { FromWalTruncate, WalTruncateSettings } from './wal-truncate.js';

if (!parentPort) throw new Error('wal-truncate-thread runs as a worker thread (wal-truncate.ts)');
const settings = workerData as WalTruncateSettings;

async function empty(): Promise<FromWalTruncate> {
  const db = new Database(settings.file, { fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${settings.busyTimeoutMs}`);
    await truncateWal(db);
    return { done: true };
  } finally {
    db.close();
  }
}

empty()
  .catch((err: unknown): FromWalTruncate => ({ error: err instanceof Error ? err.message : String(err) }))
  .then((answer) => parentPort!.postMessage(answer));
