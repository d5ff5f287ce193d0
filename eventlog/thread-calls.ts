import type { Worker } from 'node:worker_threads';

/**
 * The thread's Node options: the parent's, inherited as Node does by default, except in a process
 * started from string input (`node --input-type=module -e …`): Node refuses --input-type for a
 * worker started from a file (ERR_INPUT_TYPE_NOT_ALLOWED), and a list given instead may hold no
 * V8 or process-wide option (--expose-gc, say), so that thread starts with none.
 */
export const THREAD_EXEC_ARGV = process.execArgv.some((a) => a.startsWith('--input-type')) ? [] : undefined;

/** How a thread's answers and its end read, for one kind of thread. */
export interface ThreadCallsOptions<A> {
  /** The answer a call gets from a message that did not fail. */
  answer(message: Record<string, unknown>): A;
  /** The error a call gets when the thread answers it `failed`. */
  failed(reason: string): Error;
  /** The error the calls in flight get when the thread stops (`err`: its error, or its exit). */
  stopped(err: Error): Error;
  /** Told once, after the calls in flight were failed, when the thread stops. */
  onStop?(err: Error, wasReady: boolean): void;
}

/**
 * The main thread's side of a worker that answers calls by id (`{id, failed?}` or the answer) and
 * says `{ready: true}` once it takes them: the key store's thread (keys.ts), the sealing thread
 * (sealed-turn.ts) and the idempotency store's (runtime/idempotency/sqlite.ts), whose side is
 * thread-serve.js's serveCalls. It keeps the process alive only while a call is in flight, and fails every
 * call in flight, and every later one, once the thread stops.
 */
export class ThreadCalls<A> {
  private nextId = 1;
  private readonly inflight = new Map<number, { resolve: (answer: A) => void; reject: (err: Error) => void }>();
  private broken: Error | null = null;
  private idled: Array<() => void> = [];
  /** Whether the thread has started and takes calls. */
  ready = false;

  constructor(
    readonly worker: Worker,
    options: ThreadCallsOptions<A>,
  ) {
    worker.unref();
    worker.on('message', (m: Record<string, unknown> & { id?: number; failed?: string; ready?: true }) => {
      if (m.ready) {
        this.ready = true;
        return;
      }
      const w = this.inflight.get(m.id!);
      if (!w) return;
      this.inflight.delete(m.id!);
      if (m.failed !== undefined) w.reject(options.failed(m.failed));
      else w.resolve(options.answer(m));
      if (!this.inflight.size) this.settle();
    });
    const stop = (err: Error) => {
      if (this.broken) return;
      this.broken = err;
      const failure = options.stopped(err);
      for (const w of this.inflight.values()) w.reject(failure);
      this.inflight.clear();
      this.settle();
      options.onStop?.(err, this.ready);
    };
    // Only the exit decides: a thread that says ready and dies at once can have its uncaught error
    // reach this thread before its ready (measured on Node 20: about a third of such threads),
    // but every message it sent arrives before its exit. Taken at the error, such a thread would
    // count as one that never started, and its work would stay on this thread for good.
    let error: Error | null = null;
    worker.on('error', (err) => (error ??= err));
    worker.on('exit', (code) => stop(error ?? new Error(`exit code ${code}`)));
  }

  /** Why the thread takes no more calls (it stopped), or null. */
  get failure(): Error | null {
    return this.broken;
  }

  get busy(): boolean {
    return this.inflight.size > 0;
  }

  /** Resolves once no call is in flight. */
  idle(): Promise<void> {
    return this.busy ? new Promise((done) => this.idled.push(done)) : Promise.resolve();
  }

  call(message: Record<string, unknown>): Promise<A> {
    if (this.broken) return Promise.reject(this.broken);
    const id = this.nextId++;
    this.worker.ref();
    return new Promise((resolve, reject) => {
      this.inflight.set(id, { resolve, reject });
      this.worker.postMessage({ id, ...message });
    });
  }

  /** Lets the calls in flight finish, sends `{close: true}` (the thread's own ending), and ends the thread. */
  async close(): Promise<void> {
    if (!this.broken) await this.call({ close: true }).catch(() => undefined);
    await this.worker.terminate();
  }

  private settle(): void {
    this.worker.unref();
    const idled = this.idled;
    this.idled = [];
    for (const done of idled) done();
  }
}
