// @ts-check
/*
 * The embedded idempotency store's thread, started by SqliteIdempotencyStore (sqlite.ts) for a
 * store in a file: each call is the statements of one or more turns of the main thread's event
 * loop, run in one transaction on this thread's own connection and answered once committed (an
 * answer kept: once its fsync has returned). The main thread, which serves the API, keeps only
 * the message's copy: a batch's stored answer of ~500 KB held its event loop 3.4-7.7 ms in the
 * commit and its fsync. Plain JavaScript, typed by JSDoc and checked by tsc, as the key store's
 * thread is (eventlog/keys-thread.js).
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { serveCalls } from '../../eventlog/thread-serve.js';
import { openTable } from './sqlite-table.js';
/** @import { Op, Times } from './sqlite-table.js' */

if (!parentPort) throw new Error('sqlite-thread.js runs as a worker thread of the idempotency store');
const port = parentPort;
const { file, owner, times } = /** @type {{ file: string; owner: string; times: Times }} */ (workerData);

const db = new Database(file);
const turn = openTable(db, owner, times);

// Turns go to the thread from now on; those before ran on the main thread.
serveCalls(port, (/** @type {{ ops?: Op[] }} */ m) => ({ answer: { results: turn(m.ops ?? []) } }), () => db.close());
