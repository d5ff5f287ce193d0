import type { Worker } from 'node:worker_threads';
import type { Position } from '../../domain/shared/events.js';
import type { FollowerStatus } from '../../eventlog/follower.js';
import type { EventLog, InlineStepModule } from '../../eventlog/port.js';
import type { CatchUpProgress } from './progress.js';
import { PositionWaiters, type ReadModelsDriver } from './status.js';
import type { FromThread, ToThread } from './wire.js';

export interface ProjectorThreadOptions {
  /** How long a write waits for its events to be projected before giving up. */
  waitTimeoutMs?: number;
  /** Where failures, recoveries and progress are told (a logger). */
  report?: (message: string) => void;
  onProgress?: (progress: CatchUpProgress) => void;
}

const at = (commit: bigint): Position => ({ commit, prepare: commit });

/**
 * The main thread's side of the engine's thread driver (thread-loop.ts): it learns each position
 * the read database has reached, from that thread and from the log's inline step (inline.ts), so
 * a write can answer once its events are readable (read-your-writes), and keeps the follower's
 * readiness for /readyz as `read-models`.
 */
export class ProjectorThread implements ReadModelsDriver {
  private readonly reached: PositionWaiters;
  private caughtUp = false;
  private failure: string | null = null;
  private latest: CatchUpProgress | null = null;
  private readonly exited: Promise<void>;
  private stopping = false;

  private constructor(
    private readonly worker: Worker,
    /** The inline step that applies the log's own commits beside this thread (inline.ts). */
    private readonly inline: InlineStepModule,
    private readonly options: ProjectorThreadOptions,
    private readonly countAfter: (position: Position) => Promise<number>,
  ) {
    this.reached = new PositionWaiters(options.waitTimeoutMs ?? 15_000);
    this.reached.reach(at(0n));
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
  }

  /** Resolves once the thread running thread-loop.ts on `worker` has laid out the read database (and dropped what it must rebuild). */
  static start(worker: Worker, inline: InlineStepModule, countAfter: (p: Position) => Promise<number>, options: ProjectorThreadOptions = {}): Promise<ProjectorThread> {
    const thread = new ProjectorThread(worker, inline, options, countAfter);
    return new Promise((resolve, reject) => {
      const early = (err: Error) => reject(err);
      worker.once('error', early);
      worker.on('message', (m: FromThread) => {
        if (m.type === 'ready') {
          worker.off('error', early);
          worker.on('error', (err) => thread.broken(err));
          if (m.rebuilt.length && m.head !== '0') options.report?.(`read models to build from the log (${m.head} events): ${m.rebuilt.join(', ')}`);
          thread.reached.reach(at(BigInt(m.position)));
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
      this.reached.reach(at(BigInt(m.position)));
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
    this.reached.failAll(err);
  }

  /** The log's writer thread applied the read models up to `position` itself (the inline step, inline.ts). */
  applied(position: bigint): void {
    this.reached.reach(at(position));
  }

  /**
   * Has `log` run the inline step after each of its commits from now on, so a write answers
   * without waiting for this thread; false where the log cannot (it commits on the caller's thread).
   */
  async attachInline(log: EventLog): Promise<boolean> {
    return (await log.projectInline?.(this.inline, (p) => this.applied(p))) ?? false;
  }

  /** Resolves once the read database holds every event up to `position` (read-your-writes). */
  waitFor(position: Position): Promise<void> {
    const target = at(position.commit);
    if (this.reached.passed(target)) return Promise.resolve();
    this.worker.postMessage({ type: 'wake' } satisfies ToThread);
    return this.reached.wait(target);
  }

  progress(): CatchUpProgress | null {
    return this.caughtUp ? null : this.latest;
  }

  async status(): Promise<FollowerStatus> {
    const commit = this.reached.position?.commit ?? 0n;
    const behind = await this.countAfter(at(commit));
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
