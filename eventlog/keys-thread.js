// @ts-check
/*
 * The embedded key store's thread, started by SqliteKeyStore (keys.ts) for a store in a file: it
 * makes the keys of new constituents (a random key each, wrapped by the main key, inserted, one
 * transaction and one fsync a batch) off the main thread, which serves the API meanwhile and
 * gets the keys back in memory. Plain JavaScript, typed by JSDoc and checked by tsc, as the log's
 * writer thread is, so that this file runs from the sources under the test runner and, copied by
 * tsc, from the build.
 */
import { randomFillSync } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { sealBytes } from './sealed-format.js';
import { serveCalls } from './thread-serve.js';

if (!parentPort) throw new Error('keys-thread.js runs as a worker thread of the key store');
const port = parentPort;
const { file, main } = /** @type {{ file: string; main: import('node:crypto').KeyObject }} */ (workerData);

const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('busy_timeout = 5000');
db.pragma('secure_delete = ON');
const many = db.prepare('SELECT subject, wrapped FROM data_keys WHERE subject IN (SELECT value FROM json_each(?))');
const insert = db.prepare('INSERT INTO data_keys (subject, wrapped) VALUES (?, ?)');

/**
 * The key sealed by the main key for its subject, as wrapKey (keys.ts) seals it and the main
 * thread unwraps it: sealed-format.js's bytes, the subject bound as associated data, in base64.
 * @param {string} subject
 * @param {Buffer} key
 */
function wrap(subject, key) {
  return sealBytes(main, key, `data-key:${subject}`).toString('base64');
}

/** Immediate: another process on the file cannot slip its key in between the read and the insert. */
const make = db.transaction(
  /** @param {string[]} subjects */
  (subjects) => {
    const rows = /** @type {Array<{ subject: string; wrapped: string | null }>} */ (many.all(JSON.stringify(subjects)));
    const known = new Set(rows.map((r) => r.subject));
    const fresh = subjects.filter((s) => !known.has(s));
    // One buffer for every key made, so that the answer carries one block of bytes, not one each.
    const keys = new Uint8Array(32 * fresh.length);
    randomFillSync(keys);
    fresh.forEach((subject, i) => insert.run(subject, wrap(subject, Buffer.from(keys.buffer, i * 32, 32))));
    return { rows, made: fresh, keys };
  },
);

// Batches go to the thread from now on; those before were made on the main thread.
serveCalls(
  port,
  (/** @type {{ subjects?: string[] }} */ m) => {
    const answer = make.immediate(m.subjects ?? []);
    return { answer, transfer: [answer.keys.buffer] };
  },
  () => db.close(),
);
