import type { Worker } from 'node:worker_threads';
import type { Position } from '../domain/shared/events.js';
import type { FollowerStatus } from '../eventlog/follower.js';
import type { CatchUpProgress } from '../projections/progress.js';
import { type InlineSettings } from './inline-projection.js';
import type { FromThread, ThreadSettings, ToThread } from './projector-wire.js';
import { startModuleThread } from './thread-projectors.js';

export type { CatchUpProgress };

/** The embedded read models' database, beside the log in the data dir. */
export const READ_MODELS_FILE = 'readmodels.sqlite';
export const LOG_FILE = 'turnout.sqlite';

/** The projector thread (projector-thread.ts), from the build or the sources. */
const startWorker = (workerData: ThreadSettings): Worker => startModuleThread(import.meta.url, 'projector-thread', { workerData, name: 'turnout-read-models' });

export interface ProjectorThreadOptions {
  /** How long a write waits for its events to be projected before giving up. */
  waitTimeoutMs?: number;
  /** Where failures, recoveries and progress are told (a logger). */
  report?: (message: string) => void;
  onProgress?: (progress: CatchUpProgress) => void;
  settings?: Partial<Omit<ThreadSettings, 'logFile' | 'readFile'>>;
}

/**
 * The main thread's side of the projector thread (projector-thread.ts): it learns each position
 * the read database has reached, so a write can answer once its events are readable
 * (read-your-writes), and keeps the follower's readiness for /readyz as `read-models`.
 */
export class ProjectorThread {
  private position = 0n;
  private caughtUp = false;
  private failure: string | null = null;
  private latest: CatchUpProgress | null = null;
  private waiters: Array<{ position: bigint; resolve: () => void; reject: (err: Error) => void }> = [];
  private readonly exited: Promise<void>;
  private stopping = false;

  private constructor(
    /** What the log's writer thread needs to apply its own commits beside this thread (inline-projection.ts). */
    readonly inline: InlineSettings,
    private readonly worker: Worker,
    private readonly options: ProjectorThreadOptions,
    private readonly countAfter: (position: Position) => Promise<number>,
  ) {
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
  }

  /** Resolves once the thread has laid out the read database (and dropped what it must rebuild). */
  static start(files: { logFile: string; readFile: string }, countAfter: (p: Position) => Promise<number>, options: ProjectorThreadOptions = {}): Promise<ProjectorThread> {
    const settings: ThreadSettings = { pollMs: 100, progressEveryMs: 5_000, retryInitialMs: 100, retryMaxMs: 30_000, ...options.settings, ...files };
    const worker = startWorker(settings);
    const thread = new ProjectorThread({ ...files, projectorsModule: settings.projectorsModule }, worker, options, countAfter);
    return new Promise((resolve, reject) => {
      const early = (err: Error) => reject(err);
      worker.once('error', early);
      worker.on('message', (m: FromThread) => {
        if (m.type === 'ready') {
          worker.off('error', early);
          worker.on('error', (err) => thread.broken(err));
          if (m.rebuilt.length && m.head !== '0') options.report?.(`read models to build from the log (${m.head} events): ${m.rebuilt.join(', ')}`);
          thread.reached(BigInt(m.position));
          resolve(thread);
        } else thread.heard(m);
      });
      worker.once('exit', (code) => {
        reject(new Error(`the read-model projector thread exited (code ${code}) before it was ready`));
        thread.broken(new Error(`the read-model projector thread exited (code ${code})`));
      });
      worker.unref();
    });
  }

  private heard(m: FromThread): void {
    if (m.type === 'position') {
      if (m.caughtUp) this.caughtUp = true;
      this.reached(BigInt(m.position));
    } else if (m.type === 'progress') {
      this.latest = m;
      // Told to whoever asked for it (the server's log lines), else as a line of its own.
      if (this.options.onProgress) this.options.onProgress(m);
      else this.options.report?.(`read models: ${m.done} of ${m.total} events, ${m.rate}/s, about ${m.etaSeconds ?? '?'} s left`);
    } else if (m.type === 'failed') {
      if (this.failure === null) this.options.report?.(`${m.message}; retrying in ${m.retryInMs} ms`);
      this.failure = m.message;
    } else if (m.type === 'recovered') {
      this.options.report?.('read models: the failing event applied; projecting again');
      this.failure = null;
    }
  }

  private broken(err: Error): void {
    if (this.stopping || this.failure === err.message) return;
    this.failure = err.message;
    this.options.report?.(`the read-model projector thread stopped: ${err.message}`);
    // Nothing will project these any more: their writes answer with an error, not after a time-out.
    for (const w of this.waiters.splice(0)) w.reject(err);
  }

  /** The log's writer thread applied the read models up to `position` itself (inline-projection.ts). */
  applied(position: bigint): void {
    this.reached(position);
  }

  private reached(position: bigint): void {
    if (position > this.position) this.position = position;
    if (!this.waiters.length) return;
    const still: typeof this.waiters = [];
    for (const w of this.waiters) (w.position <= this.position ? w.resolve() : still.push(w));
    this.waiters = still;
  }

  /** Resolves once the read database holds every event up to `position` (read-your-writes). */
  waitFor(position: Position): Promise<void> {
    const target = position.commit;
    if (target <= this.position) return Promise.resolve();
    this.worker.postMessage({ type: 'wake' } satisfies ToThread);
    const timeoutMs = this.options.waitTimeoutMs ?? 15_000;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done);
        reject(new Error(`read models did not reach position ${target} within ${timeoutMs} ms`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const fail = (err: Error) => {
        clearTimeout(timer);
        reject(err);
      };
      this.waiters.push({ position: target, resolve: done, reject: fail });
    });
  }

  /** The last catch-up progress the thread told, while one runs; null once caught up. */
  progress(): CatchUpProgress | null {
    return this.caughtUp ? null : this.latest;
  }

  /** The follower's readiness (decisions.md §1): caught up once it first reached the head. */
  async status(): Promise<FollowerStatus> {
    const behind = await this.countAfter({ commit: this.position, prepare: this.position });
    const state = this.failure !== null ? 'failed' : this.caughtUp || behind === 0 ? 'caught_up' : 'catching_up';
    if (state === 'caught_up') this.caughtUp = true;
    return { name: 'read-models', state, behind };
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.worker.ref();
    this.worker.postMessage({ type: 'stop' } satisfies ToThread);
    await this.exited;
  }
}
