// @ts-check
/*
 * The SQLite event log's writer thread, started by WriterThread (sqlite-writer.ts) with
 * `new Worker(new URL('./sqlite-writer-thread.js', import.meta.url))`. Plain JavaScript, typed by
 * JSDoc and checked by tsc, so this very file runs from the sources under the test runner (which
 * does not transform a worker's entry file) and, copied by tsc, from the build.
 *
 * It has its own connection to the file. Whatever batches arrived while it was committing go
 * into its next transaction together, so the thread starts on them at once, without waiting for
 * the event loop to collect them, and one fsync serves them all.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { makeCommitter } from './sqlite-committer.js';
import { decodeBatch, encodeOutcomes } from './sqlite-wire.js';
/** @import { CommitNotice, WireAppend, WriterAnswer, WriterRequest } from './sqlite-wire.js' */

if (!parentPort) throw new Error('sqlite-writer-thread.js runs as a worker thread of the event log');
const port = parentPort;
const { file, marks } = /** @type {{ file: string; marks: SharedArrayBuffer }} */ (workerData);

const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('busy_timeout = 5000');
// As every connection that writes the log: freed bytes zeroed (decisions.md §17, sqlite-file.ts).
db.pragma('secure_delete = ON');
const commit = makeCommitter(db, new BigInt64Array(marks));
/**
 * Where each commit is told as soon as it is durable (the read models' projector thread, which
 * applies it while this thread commits the next batches): a CommitNotice.
 * @type {import('node:worker_threads').MessagePort | null}
 */
let commitsTo = null;

/** @param {unknown} err */
const failure = (err) => (err instanceof Error ? err.message : String(err));

/**
 * Commits the batches collected so far in one transaction, tells it to the port given for it,
 * and answers each batch with its own outcomes.
 * @param {Array<{ id: number; text: string; batch: WireAppend[] }>} batches
 * @param {WriterAnswer[]} answers
 */
function commitTogether(batches, answers) {
  if (batches.length === 0) return;
  try {
    const outcomes = commit(batches.flatMap((b) => b.batch));
    let last = 0n;
    for (const o of outcomes) if ('position' in o && o.position > last) last = o.position;
    // Told before the appends are answered: the projector thread starts on them while the main
    // thread takes the outcomes in. The batches' texts as they came (strings: a structured clone
    // copies them whole), so that thread need not read back from the file what was just written.
    if (commitsTo && last > 0n) {
      /** @type {CommitNotice} */
      const notice = { last, texts: batches.map((b) => b.text), outcomes: encodeOutcomes(outcomes) };
      commitsTo.postMessage(notice);
    }
    let at = 0;
    for (const b of batches) {
      answers.push({ id: b.id, outcomes: encodeOutcomes(outcomes.slice(at, at + b.batch.length)) });
      at += b.batch.length;
    }
  } catch (err) {
    for (const b of batches) answers.push({ id: b.id, failed: failure(err) });
  }
  batches.length = 0;
}

/**
 * Handles the requests that arrived together, in order. Returns false once told to close.
 * @param {WriterRequest[]} requests
 */
function handle(requests) {
  /** @type {WriterAnswer[]} */
  const answers = [];
  /** @type {Array<{ id: number; text: string; batch: WireAppend[] }>} */
  const batches = [];
  for (const r of requests) {
    if ('batch' in r) {
      batches.push({ id: r.id, text: r.batch, batch: decodeBatch(r.batch) });
      continue;
    }
    // Anything else is answered in order, after the batches sent before it.
    commitTogether(batches, answers);
    if ('settings' in r) {
      try {
        /** @param {string} name */
        const pragma = (name) => String(db.pragma(name, { simple: true }));
        answers.push({ id: r.id, settings: { journalMode: pragma('journal_mode'), synchronous: Number(pragma('synchronous')) } });
      } catch (err) {
        answers.push({ id: r.id, failed: failure(err) });
      }
    } else if ('commitsTo' in r) {
      commitsTo?.close();
      commitsTo = r.commitsTo;
      answers.push({ id: r.id, attached: true });
    } else {
      port.postMessage(answers);
      commitsTo?.close();
      db.close();
      port.close();
      return false;
    }
  }
  commitTogether(batches, answers);
  port.postMessage(answers);
  return true;
}

/**
 * Whatever arrived while a commit ran (its fsync included) goes into the next one together: the
 * queue is drained before each handling rather than one message per turn of the event loop.
 */
port.on('message', (/** @type {WriterRequest} */ first) => {
  /** @type {WriterRequest[]} */
  let requests = [first];
  while (requests.length) {
    for (let next = receiveMessageOnPort(port); next; next = receiveMessageOnPort(port)) requests.push(next.message);
    if (!handle(requests)) return;
    requests = [];
    const next = receiveMessageOnPort(port);
    if (next) requests.push(next.message);
  }
});
