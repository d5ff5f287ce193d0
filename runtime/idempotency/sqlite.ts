import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { truncateWal } from '../../eventlog/erase.js';
import { THREAD_EXEC_ARGV, ThreadCalls } from '../../eventlog/thread-calls.js';
import { privateFile, secureDataDir } from '../private-files.js';
import { type Begun, type IdempotencyStore, STALE_MS, type StoredAnswer, TTL_MS } from './port.js';
import { type Op, openTable } from './sqlite-table.js';

/**
 * Who runs a key: this process's pid and a token of this start. The token tells an entry of an
 * earlier process that had the same pid (a restarted container's server is pid 1 again) from ours.
 * The store's thread takes keys under the same name: it is this process.
 */
const OWNER = `${process.pid}/${randomUUID().slice(0, 8)}`;
const TIMES = { ttlMs: TTL_MS, staleMs: STALE_MS };

/** The statements whose commit need not be durable before they are answered (openTable). */
const QUICK = new Set<Op[0]>(['take', 'release', 'abandon']);

/** The thread's program: a module file beside this one, JavaScript as the key store's thread is (eventlog/keys-thread.js). */
export const IDEMPOTENCY_THREAD = new URL('./sqlite-thread.js', import.meta.url);

interface Queued {
  op: Op;
  done: (value: unknown) => void;
  failed: (err: unknown) => void;
}

/**
 * Idempotency keys in their own small SQLite file in the data dir (`idempotency.sqlite`, 0600),
 * so they survive restarts without taking the event log's write lock. One statement inserts a
 * new entry or takes over an expired or abandoned one, so of racing requests exactly one starts.
 *
 * What one turn of the event loop asks (takes, answers, releases) commits in one transaction,
 * in the order asked (sqlite-table.js), so the store costs one commit per turn, not one per
 * statement; a turn that keeps an answer commits at synchronous=FULL, and an answer is sent only
 * once its commit is durable. For a store in a file the turns run on a thread of its own
 * (sqlite-thread.js), one flush at a time: the turns asked while one is on the thread go together
 * in the next, one transaction and one fsync for all their answers (a group commit), their takes
 * and releases ahead of the answers in a transaction of their own that needs no fsync. Until the
 * thread has started (and for good if it cannot), and for an in-memory store, a turn runs here.
 * A thread that stops fails the calls it had, and the next turn starts another.
 *
 * A running entry names the process running it: one whose process has died (killed mid-request)
 * is taken over at once, so a client's retry after a crash and restart runs instead of waiting
 * out the stale time (a batch write resumes where it stopped, decisions.md §14).
 */
export class SqliteIdempotencyStore implements IdempotencyStore {
  private readonly turnHere: (ops: Op[]) => unknown[];
  private pending: Queued[] = [];
  /** A flush is scheduled for this turn's end. */
  private scheduled = false;
  /** The flush on the thread (its one or two calls), until answered: the turns asked meanwhile wait for it. */
  private onThread: Promise<void> | null = null;
  private thread: IdempotencyThread | null = null;
  /** A thread stopped before it was ready: its program cannot run here, so every turn runs on the main thread. */
  private threadless: boolean;
  private closed = false;

  constructor(
    private readonly db: Database.Database,
    /** Answers an erasure's redaction reads per turn of the event loop. */
    private readonly redactPage = 500,
    /** The store's thread's program; null: every turn on the main thread (as for an in-memory store). */
    private readonly program: URL | null = IDEMPOTENCY_THREAD,
  ) {
    this.turnHere = openTable(db, OWNER, TIMES);
    this.threadless = db.memory || !program;
    // Started now, so that it is ready by the first requests with a key.
    this.threadNow();
  }

  /** The data dir's file, or an in-memory database for `:memory:`. */
  static open(dataDir: string): SqliteIdempotencyStore {
    if (dataDir === ':memory:') return new SqliteIdempotencyStore(new Database(':memory:'));
    secureDataDir(dataDir);
    const file = path.join(dataDir, 'idempotency.sqlite');
    privateFile(file, { sqlite: true });
    return new SqliteIdempotencyStore(new Database(file));
  }

  begin(scope: string, key: string, fingerprint: string, now: number, mark?: string): Promise<Begun> {
    return this.queued(['take', scope, key, fingerprint, now, mark ?? null]) as Promise<Begun>;
  }

  complete(scope: string, key: string, answer: StoredAnswer, startedAt?: number): Promise<void> {
    return this.queued(['complete', scope, key, answer.status, answer.body, JSON.stringify(answer.headers), startedAt ?? null]) as Promise<void>;
  }

  release(scope: string, key: string, startedAt?: number): Promise<void> {
    return this.queued(['release', scope, key, startedAt ?? null]) as Promise<void>;
  }

  abandon(scope: string, key: string, startedAt?: number): Promise<void> {
    return this.queued(['abandon', scope, key, startedAt ?? null]) as Promise<void>;
  }

  /** Runs `op` with this turn's other statements, in the order asked (on the thread, the takes and releases ahead of the rest: flush). */
  private queued(op: Op): Promise<unknown> {
    return new Promise((done, failed) => {
      this.pending.push({ op, done, failed });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.onThread || !this.pending.length) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** Commits what the turns asked since the last commit: on the thread when it takes calls, else here. */
  private flush(): void {
    if (this.onThread || !this.pending.length) return;
    const batch = this.pending;
    this.pending = [];
    const thread = this.threadNow();
    if (!thread) {
      try {
        const results = this.turnHere(batch.map((b) => b.op));
        batch.forEach((b, i) => b.done(results[i]));
      } catch (err) {
        batch.forEach((b) => b.failed(err));
      }
      return;
    }
    // Takes and releases first, in a call of their own (no fsync), answered while the thread
    // syncs the answers kept: a take must not wait for a commit it does not need. A take of a key
    // whose answer is in that second call finds it running, which it is: its request has not
    // answered yet, and answers only once that commit is durable.
    const quick = batch.filter((b) => QUICK.has(b.op[0]));
    const rest = quick.length === batch.length ? [] : batch.filter((b) => !QUICK.has(b.op[0]));
    const call = (part: Queued[]) =>
      thread.turn(part.map((b) => b.op)).then(
        (results) => part.forEach((b, i) => b.done(results[i])),
        (err: unknown) => part.forEach((b) => b.failed(err)),
      );
    this.onThread = Promise.all([quick.length ? call(quick) : null, rest.length ? call(rest) : null]).then(() => undefined);
    void this.onThread.then(() => {
      this.onThread = null;
      this.schedule();
    });
  }

  /** The thread to run a turn on, started if none is; null while it starts, or when it cannot run (threadless) or the store closes. */
  private threadNow(): IdempotencyThread | null {
    if (this.threadless || this.closed) return null;
    const thread = (this.thread ??= new IdempotencyThread(this.program!, this.db.name, (stopped, wasReady) => {
      if (this.thread === stopped) this.thread = null;
      if (!wasReady) this.threadless = true;
    }));
    return thread.ready ? thread : null;
  }

  /**
   * decisions.md §17: the stored answers `stale` picks are replaced by `redact(body)`, durably,
   * then the WAL is emptied so no old page stays in it. Answers how many changed.
   */
  async redact(stale: (body: string) => boolean, redact: (body: string) => string): Promise<number> {
    // A page a turn: a day of answers read and tested at once held the main thread, and every
    // request with it. Each page's rewrite commits on its own; an erasure that dies between pages
    // redacts them all again at the next start.
    let changed = 0;
    for (let after = { scope: '', key: '' }; ; ) {
      const rows = (await this.queued(['page', after.scope, after.key, this.redactPage])) as Array<{ scope: string; key: string; body: string; started_at: number }>;
      const rewritten: Array<[string, string, string, number]> = [];
      for (const r of rows) if (stale(r.body)) rewritten.push([redact(r.body), r.scope, r.key, r.started_at]);
      if (rewritten.length) changed += (await this.queued(['redacted', rewritten])) as number;
      if (rows.length < this.redactPage) break;
      after = rows[rows.length - 1];
    }
    await truncateWal(this.db);
    return changed;
  }

  /** Lets every statement asked finish (on the thread, or here), ends the thread, and closes the file. */
  async close(): Promise<void> {
    while (this.onThread || this.pending.length) {
      if (this.onThread) await this.onThread;
      else this.flush();
    }
    this.closed = true;
    const thread = this.thread;
    this.thread = null;
    await thread?.close();
    this.db.close();
  }
}

/**
 * The main thread's side of the store's thread (sqlite-thread.js): the turns' statements sent in
 * one message, their results answered in one, once committed. It keeps the process alive only
 * while a call is in flight.
 */
class IdempotencyThread {
  private readonly calls: ThreadCalls<unknown[]>;

  constructor(program: URL, file: string, stopped: (thread: IdempotencyThread, wasReady: boolean) => void) {
    const worker = new Worker(program, { workerData: { file, owner: OWNER, times: TIMES }, name: 'turnout-idempotency', execArgv: THREAD_EXEC_ARGV });
    this.calls = new ThreadCalls<unknown[]>(worker, {
      answer: (m) => m.results as unknown[],
      failed: (reason) => new Error(`the idempotency store's thread failed: ${reason}`),
      stopped: (err) => new Error(`the idempotency store's thread stopped (${err.message}) with this request's key under way: retry it`),
      onStop: (_err, wasReady) => stopped(this, wasReady),
    });
  }

  /** The thread itself (the tests reach it to end it). */
  get worker(): Worker {
    return this.calls.worker;
  }

  get ready(): boolean {
    return this.calls.ready;
  }

  turn(ops: Op[]): Promise<unknown[]> {
    return this.calls.call({ ops });
  }

  /** Lets the call in flight finish, closes the thread's connection, and ends the thread. */
  close(): Promise<void> {
    return this.calls.close();
  }
}
