// @ts-check
/*
 * The group commit of the SQLite event log, and the marks it leaves in shared memory. Plain
 * JavaScript, typed by JSDoc and checked by tsc, because it runs on the writer thread
 * (sqlite-writer-thread.js), which Node 20 loads without a TypeScript step; it also runs on the
 * calling thread when the log commits in place.
 */
/** @import Database from 'better-sqlite3' */
/** @import { Outcome, WireAppend } from './sqlite-wire.js' */

/**
 * What the committer has seen of the log, shared with the reading thread (a SharedArrayBuffer
 * of three 64-bit slots, read and written with Atomics):
 * - OWN_LAST: the last position this committer wrote;
 * - FOREIGN_UP_TO: the highest position it found written by someone else (another process)
 *   when it began a transaction;
 * - COMMITS: the transactions it committed (each one fsync).
 * A reader settled to position P then misses nothing another writer appended when the head is
 * at most OWN_LAST and FOREIGN_UP_TO is at most P.
 */
export const OWN_LAST = 0;
export const FOREIGN_UP_TO = 1;
export const COMMITS = 2;
export const newMarks = () => new BigInt64Array(new SharedArrayBuffer(24));

/** @typedef {(batch: WireAppend[]) => Outcome[]} Committer */

/**
 * The group commit: every append of a batch in one IMMEDIATE transaction, so they share one fsync,
 * each checked against its own expected revision (and the rows earlier appends of the batch
 * wrote) and failing alone. A failed commit throws, and then nothing of the batch is durable.
 * @param {Database.Database} db
 * @param {BigInt64Array} marks
 * @returns {Committer}
 */
export function makeCommitter(db, marks) {
  const logHead = /** @type {Database.Statement<[], bigint | null>} */ (db.prepare('SELECT MAX(position) FROM events').pluck().safeIntegers(true));
  const streamHead = /** @type {Database.Statement<[string], bigint>} */ (
    db.prepare('SELECT revision FROM events WHERE stream = ? ORDER BY revision DESC LIMIT 1').pluck().safeIntegers(true)
  );
  /** @type {Database.Statement<[string, bigint, string, string, string]>} */
  const insert = db.prepare('INSERT INTO events (stream, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?)').safeIntegers(true);
  // IMMEDIATE takes the write lock before the revision checks read: with another process on the
  // file, a deferred transaction that read first fails at once with SQLITE_BUSY (stale snapshot)
  // instead of waiting out busy_timeout.
  const run = db.transaction(
    /** @param {WireAppend[]} batch */
    (batch) => {
      const before = logHead.get() ?? 0n;
      if (before > Atomics.load(marks, OWN_LAST)) Atomics.store(marks, FOREIGN_UP_TO, before);
      /** @type {Outcome[]} */
      const outcomes = [];
      for (const a of batch) {
        const head = streamHead.get(a.stream);
        const actual = head === undefined ? null : BigInt(head);
        const ok = a.expected === 'any' || (a.expected === 'no_stream' && actual === null) || (typeof a.expected === 'bigint' && actual === a.expected);
        if (!ok) {
          outcomes.push({ conflict: true, actual });
          continue;
        }
        let revision = actual ?? -1n;
        let position = 0n;
        for (const e of a.events) {
          revision += 1n;
          position = BigInt(insert.run(a.stream, revision, e.type, e.data, e.metadata).lastInsertRowid);
        }
        outcomes.push({ revision, position });
      }
      return outcomes;
    },
  );
  return (batch) => {
    const outcomes = run.immediate(batch);
    Atomics.add(marks, COMMITS, 1n);
    // Committed: only now are these positions visible to readers.
    let last = 0n;
    for (const o of outcomes) if ('position' in o && o.position > last) last = o.position;
    if (last > 0n) Atomics.store(marks, OWN_LAST, last);
    return outcomes;
  };
}
