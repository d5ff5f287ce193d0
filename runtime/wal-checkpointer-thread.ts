/*
 * The WAL checkpointer's thread (WalCheckpointer, wal-checkpointer.ts): its own connection to the
 * file, a checkpoint in the mode asked for on each message, and the frame counts SQLite reports.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { walCheckpoint } from '../projections/store/sqlite-wal.js';
import type { CheckpointerSettings, FromCheckpointer, ToCheckpointer } from './wal-checkpointer.js';

if (!parentPort) throw new Error('wal-checkpointer-thread runs as a worker thread (wal-checkpointer.ts)');
const port = parentPort;
const settings = workerData as CheckpointerSettings;
const db = new Database(settings.file, { fileMustExist: true });
// A RESTART waits this long for a reader still on an older snapshot, then answers busy; the
// writer on the other thread holds its batches meanwhile, so it is never what is waited for long.
db.pragma(`busy_timeout = ${settings.busyTimeoutMs}`);

port.on('message', (m: ToCheckpointer) => {
  if (m.type === 'close') {
    db.close();
    port.close();
    return;
  }
  let answer: FromCheckpointer;
  try {
    answer = { id: m.id, ...walCheckpoint(db, m.mode) };
  } catch (err) {
    answer = { id: m.id, error: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(answer);
});
