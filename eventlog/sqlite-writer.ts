import type Database from 'better-sqlite3';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** One append as the committer sees it: the events already serialised. */
export interface WireAppend {
  stream: string;
  events: Array<{ type: string; data: string; metadata: string }>;
  /** 'any', 'no_stream', or the exact revision the stream must be at. */
  expected: 'any' | 'no_stream' | bigint;
}

/**
 * What became of one append: its last revision and position (its events took the positions up to
 * that one, consecutively), or the stream's actual revision when the expected one did not hold.
 */
export type Outcome = { revision: bigint; position: bigint } | { conflict: true; actual: bigint | null };

export type Committer = (batch: WireAppend[]) => Outcome[];

/**
 * What the committer has seen of the log, shared with the reading thread (a SharedArrayBuffer
 * of three 64-bit slots, read and written with Atomics):
 * - OWN_LAST: the last position this committer wrote;
 * - FOREIGN_UP_TO: the highest position it found written by someone else (another process)
 *   when it began a transaction.
 * - COMMITS: the transactions it committed (each one fsync).
 * A reader settled to position P then misses nothing another writer appended when the head is
 * at most OWN_LAST and FOREIGN_UP_TO is at most P.
 */
export const OWN_LAST = 0;
export const FOREIGN_UP_TO = 1;
export const COMMITS = 2;
export const newMarks = () => new BigInt64Array(new SharedArrayBuffer(24));

export interface WriterSettings {
  journalMode: string;
  /** 2 is FULL. */
  synchronous: number;
}

/**
 * The group commit: every append of a batch in one IMMEDIATE transaction, so they share one fsync,
 * each checked against its own expected revision (and the rows earlier appends of the batch
 * wrote) and failing alone. A failed commit throws, and then nothing of the batch is durable.
 *
 * Self-contained on purpose, with no reference to anything outside its body: it is also the
 * source text of the writer thread (see writerThreadSource).
 */
export function makeCommitter(db: Database.Database, marks: BigInt64Array): Committer {
  // OWN_LAST, FOREIGN_UP_TO and COMMITS, repeated: this function's text also runs on its own.
  const OWN = 0;
  const FOREIGN = 1;
  const TRANSACTIONS = 2;
  const logHead = db.prepare<[], bigint | null>('SELECT MAX(position) FROM events').pluck().safeIntegers(true);
  const streamHead = db.prepare<[string], bigint>('SELECT revision FROM events WHERE stream = ? ORDER BY revision DESC LIMIT 1').pluck().safeIntegers(true);
  const insert = db.prepare<[string, bigint, string, string, string]>('INSERT INTO events (stream, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?)').safeIntegers(true);
  // IMMEDIATE takes the write lock before the revision checks read: with another process on the
  // file, a deferred transaction that read first fails at once with SQLITE_BUSY (stale snapshot)
  // instead of waiting out busy_timeout.
  const run = db.transaction((batch: WireAppend[]) => {
    const before = logHead.get() ?? 0n;
    if (before > Atomics.load(marks, OWN)) Atomics.store(marks, FOREIGN, before);
    const outcomes: Outcome[] = [];
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
  });
  return (batch) => {
    const outcomes = run.immediate(batch);
    Atomics.add(marks, TRANSACTIONS, 1n);
    // Committed: only now are these positions visible to readers.
    let last = 0n;
    for (const o of outcomes) if ('position' in o && o.position > last) last = o.position;
    if (last > 0n) Atomics.store(marks, OWN, last);
    return outcomes;
  };
}

/*
 * Between the threads a batch travels as one string and its outcomes as one BigInt64Array: a
 * structured clone copies those whole, where an array of objects is walked field by field.
 */

/**
 * A batch as one string, its parts separated by NUL: per append the stream, the expected
 * revision and the number of events, then type, data and metadata per event. JSON text never
 * holds a raw NUL (JSON.stringify escapes it); stream and type names with one are refused by
 * SqliteEventLog.append.
 */
export function encodeBatch(batch: WireAppend[]): string {
  const parts: string[] = [];
  for (const a of batch) {
    parts.push(a.stream, String(a.expected), String(a.events.length));
    for (const e of a.events) parts.push(e.type, e.data, e.metadata);
  }
  return parts.join('\u0000');
}

/** encodeBatch undone. Self-contained: it runs on the writer thread. */
export function decodeBatch(text: string): WireAppend[] {
  const batch: WireAppend[] = [];
  if (text === '') return batch;
  const parts = text.split('\u0000');
  let i = 0;
  while (i < parts.length) {
    const stream = parts[i++];
    const e = parts[i++];
    const expected = e === 'any' || e === 'no_stream' ? e : BigInt(e);
    const n = Number(parts[i++]);
    const events: WireAppend['events'] = [];
    for (let k = 0; k < n; k++, i += 3) events.push({ type: parts[i], data: parts[i + 1], metadata: parts[i + 2] });
    batch.push({ stream, expected, events });
  }
  return batch;
}

/**
 * Two slots per append: revision and position; a conflict is position -1 with the stream's
 * actual revision (-1 for none). Self-contained: it runs on the writer thread.
 */
export function encodeOutcomes(outcomes: Outcome[]): BigInt64Array {
  const out = new BigInt64Array(outcomes.length * 2);
  outcomes.forEach((o, i) => {
    if ('conflict' in o) {
      out[2 * i] = o.actual ?? -1n;
      out[2 * i + 1] = -1n;
    } else {
      out[2 * i] = o.revision;
      out[2 * i + 1] = o.position;
    }
  });
  return out;
}

export function decodeOutcomes(slots: BigInt64Array): Outcome[] {
  const outcomes: Outcome[] = [];
  for (let i = 0; i < slots.length; i += 2) {
    const revision = slots[i];
    const position = slots[i + 1];
    outcomes.push(position === -1n ? { conflict: true, actual: revision === -1n ? null : revision } : { revision, position });
  }
  return outcomes;
}

type Request = { id: number; batch: string } | { id: number; settings: true } | { close: true };
type Answer = { id: number; outcomes?: BigInt64Array; settings?: WriterSettings; failed?: string };

/**
 * The writer thread: its own connection to the file. Whatever batches arrived while it was
 * committing go into its next transaction together, so the thread starts on them at once,
 * without waiting for the event loop to collect them, and one fsync serves them all.
 */
function writerThreadMain(committerFor: typeof makeCommitter, decode: typeof decodeBatch, encode: typeof encodeOutcomes): void {
  // Through getBuiltinModule, not `require`: the text may run as CommonJS or as a module (a
  // worker inherits --input-type=module, for one).
  const { parentPort, receiveMessageOnPort, workerData } = process.getBuiltinModule('node:worker_threads');
  const port = parentPort!;
  const Sqlite = process.getBuiltinModule('node:module').createRequire(workerData.driver)(workerData.driver) as typeof Database;
  const db = new Sqlite(workerData.file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  const commit = committerFor(db, new BigInt64Array(workerData.marks as SharedArrayBuffer));
  const failure = (err: unknown) => (err instanceof Error ? err.message : String(err));

  const commitTogether = (batches: Array<{ id: number; batch: WireAppend[] }>, answers: Answer[]) => {
    if (batches.length === 0) return;
    try {
      const outcomes = commit(batches.flatMap((b) => b.batch));
      let at = 0;
      for (const b of batches) {
        answers.push({ id: b.id, outcomes: encode(outcomes.slice(at, at + b.batch.length)) });
        at += b.batch.length;
      }
    } catch (err) {
      for (const b of batches) answers.push({ id: b.id, failed: failure(err) });
    }
    batches.length = 0;
  };

  port.on('message', (first: Request) => {
    const requests: Request[] = [first];
    for (let next = receiveMessageOnPort(port); next; next = receiveMessageOnPort(port)) requests.push(next.message as Request);
    const answers: Answer[] = [];
    const batches: Array<{ id: number; batch: WireAppend[] }> = [];
    for (const r of requests) {
      if ('batch' in r) {
        batches.push({ id: r.id, batch: decode(r.batch) });
        continue;
      }
      // Anything else is answered in order, after the batches sent before it.
      commitTogether(batches, answers);
      if ('settings' in r) {
        try {
          const pragma = (name: string) => String(db.pragma(name, { simple: true }));
          answers.push({ id: r.id, settings: { journalMode: pragma('journal_mode'), synchronous: Number(pragma('synchronous')) } });
        } catch (err) {
          answers.push({ id: r.id, failed: failure(err) });
        }
      } else {
        port.postMessage(answers);
        db.close();
        port.close();
        return;
      }
    }
    commitTogether(batches, answers);
    port.postMessage(answers);
  });
}

/**
 * The writer thread's program, as text for `new Worker(…, { eval: true })`: it needs no compiled
 * file beside this module, so it runs the same from the build and from the TypeScript sources
 * under the test runner.
 */
const writerThreadSource = `(${writerThreadMain.toString()})(${makeCommitter.toString()}, ${decodeBatch.toString()}, ${encodeOutcomes.toString()});`;

/**
 * The main thread's side of the writer thread: sends a batch, resolves with its outcomes. The
 * thread commits batches in the order they are sent, and answers them in that order. It keeps
 * the process alive only while a batch is in flight.
 */
export class WriterThread {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly inflight = new Map<number, { resolve: (answer: never) => void; reject: (e: Error) => void }>();
  private broken: Error | null = null;
  private closing = false;
  private readonly exited: Promise<void>;

  constructor(file: string, marks: BigInt64Array) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(writerThreadSource, { eval: true, workerData: { file, driver, marks: marks.buffer }, name: 'turnout-log-writer' });
    this.worker.unref();
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.on('message', (answers: Answer[]) => {
      for (const a of answers) {
        const w = this.inflight.get(a.id);
        if (!w) continue;
        this.inflight.delete(a.id);
        if (a.failed !== undefined) w.reject(new Error(a.failed));
        else w.resolve((a.outcomes ? decodeOutcomes(a.outcomes) : a.settings) as never);
      }
      if (this.inflight.size === 0 && !this.closing) this.worker.unref();
    });
    const fail = (err: Error) => {
      if (!this.broken && !this.closing) console.error('The event log can no longer append: its writer thread stopped.', err);
      this.broken ??= err;
      for (const w of this.inflight.values()) w.reject(err);
      this.inflight.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the event log's writer thread exited (code ${code})`)));
  }

  /** Why the thread can take no more batches (it stopped), or null while it can. */
  get failure(): Error | null {
    return this.closing ? null : this.broken;
  }

  commit(batch: WireAppend[]): Promise<Outcome[]> {
    return this.ask<Outcome[]>({ batch: encodeBatch(batch) });
  }

  /** How the thread's connection is set up: what makes its commits durable. */
  settings(): Promise<WriterSettings> {
    return this.ask<WriterSettings>({ settings: true });
  }

  private ask<T>(message: object): Promise<T> {
    if (this.broken) return Promise.reject(this.broken);
    const id = this.nextId++;
    if (this.inflight.size === 0) this.worker.ref();
    return new Promise<T>((resolve, reject) => {
      this.inflight.set(id, { resolve: resolve as (answer: never) => void, reject });
      this.worker.postMessage({ id, ...message });
    });
  }

  /** After every batch sent so far has been answered: closes the thread's connection. */
  async close(): Promise<void> {
    // Referenced until it has exited: the process waits for the file to be closed cleanly.
    this.closing = true;
    this.worker.ref();
    if (!this.broken) this.worker.postMessage({ close: true });
    await this.exited;
  }
}
