import { type MessagePort, Worker } from 'node:worker_threads';
import { THREAD_EXEC_ARGV } from './thread-calls.js';
import { decodeOutcomes, encodeBatch, type Outcome, type WireAppend, type WriterAnswer, type WriterSettings } from './sqlite-wire.js';

// The wire format, also here beside the thread's handle (the writer thread's tests read it from here).
export { decodeBatch, decodeOutcomes, encodeBatch, encodeOutcomes, type Outcome, type WireAppend, type WriterSettings } from './sqlite-wire.js';

/**
 * The thread's program: an ordinary module file beside this one, in the sources as in the build
 * (tsc copies it; it is JavaScript because Node 20 runs a worker's entry file without a
 * TypeScript step, and so does the test runner).
 */
const THREAD_PROGRAM = new URL('./sqlite-writer-thread.js', import.meta.url);


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
    this.worker = new Worker(THREAD_PROGRAM, { workerData: { file, marks: marks.buffer }, name: 'turnout-log-writer', execArgv: THREAD_EXEC_ARGV });
    this.worker.unref();
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.on('message', (answers: WriterAnswer[]) => {
      for (const a of answers) {
        const w = this.inflight.get(a.id);
        if (!w) continue;
        this.inflight.delete(a.id);
        if (a.failed !== undefined) w.reject(new Error(a.failed));
        else w.resolve((a.outcomes ? decodeOutcomes(a.outcomes) : (a.settings ?? a.attached)) as never);
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

  /** Commits a batch; resolves with its outcomes once it is durable. */
  commit(batch: WireAppend[]): Promise<Outcome[]> {
    return this.ask<Outcome[]>({ batch: encodeBatch(batch) });
  }

  /** How the thread's connection is set up: what makes its commits durable. */
  settings(): Promise<WriterSettings> {
    return this.ask<WriterSettings>({ settings: true });
  }

  /**
   * Has the thread post each commit's last position (a bigint) to `port` from now on, as soon as
   * it is durable and before the commit's batches are answered; a later port replaces it.
   */
  async tellCommits(port: MessagePort): Promise<void> {
    await this.ask<true>({ commitsTo: port }, [port]);
  }

  private ask<T>(message: { batch: string } | { settings: true } | { commitsTo: MessagePort }, transfer: MessagePort[] = []): Promise<T> {
    if (this.broken) return Promise.reject(this.broken);
    const id = this.nextId++;
    if (this.inflight.size === 0) this.worker.ref();
    return new Promise<T>((resolve, reject) => {
      this.inflight.set(id, { resolve: resolve as (answer: never) => void, reject });
      this.worker.postMessage({ id, ...message }, transfer);
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
