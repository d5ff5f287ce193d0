/*
 * The thread that copies the live read models for `turnout rebuild --prepare` (prepare.ts): one
 * VACUUM INTO on a read-only connection, a consistent snapshot that waits for no writer and makes
 * none wait. It runs apart so the prepare's main thread keeps telling its progress meanwhile.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

if (!parentPort) throw new Error('prepare-copy runs as a worker thread (prepare.ts)');
const { from, to } = workerData as { from: string; to: string };
try {
  const db = new Database(from, { readonly: true, fileMustExist: true });
  try {
    db.prepare('VACUUM INTO ?').run(to);
  } finally {
    db.close();
  }
  parentPort.postMessage({ ok: true });
} catch (err) {
  parentPort.postMessage({ ok: false, message: err instanceof Error ? err.message : String(err) });
}
