import { MessageChannel, type Worker } from 'node:worker_threads';
import type { Position } from '../../domain/shared/events.js';
import { Backoff, DEFAULT_RETRY, type RetryPolicy } from '../../eventlog/backoff.js';
import type { FollowerStatus } from '../../eventlog/follower.js';
import type { EventLog } from '../../eventlog/port.js';
import type { CatchUpProgress } from './progress.js';
import { PositionWaiters, type ReadModelsDriver } from './status.js';
import type { FromThread, ToThread } from './wire.js';

export interface ProjectorThreadOptions {
  /** How long a write waits for its events to be projected before giving up. */
  waitTimeoutMs?: number;
  /** Where failures, recoveries and progress are told (a logger). */
  report?: (message: string) => void;
  onProgress?: (progress: CatchUpProgress) => void;
  /** The waits before a thread that died is started again: doubling, jittered, capped. */
  restart?: RetryPolicy;
}

const at = (commit: bigint): Position => ({ commit, prepare: commit });

/**
 * The main thread's side of the engine's thread driver (thread-loop.ts): it learns each position
 * the read database has reached from that thread (told each commit by the log's writer thread), so
 * a write can answer once its events are readable (read-your-writes), and keeps the follower's
 * readiness for /readyz as `read-models`. A thread that dies (an uncaught error, out of memory,
 * terminated) is started again after a back-off, the follower `reconnecting` until the new one
 * has caught up; writes waiting meanwhile are answered by the new thread.
 */
export class ProjectorThread implements ReadModelsDriver {
  private readonly reached: PositionWaiters;
  private caughtUp = false;
  private failure: string | null = null;
  private latest: CatchUpProgress | null = null;
  private worker!: Worker;
  private exited: Promise<void> = Promise.resolve();
  private stopping = false;
  /** `down`: no thread runs (it died, its successor waits out the back-off); `catching`: the successor runs but has not caught up. */
  private restarting: 'down' | 'catching' | null = null;
  private readonly restartPolicy: RetryPolicy;
  private readonly backoff: Backoff;
  private restartTimer: NodeJS.Timeout | null = null;
  /** Since when the running thread has been caught up: null while it starts and catches up. */
  private steadySince: number | null = null;
  /** The log that tells the running thread each of its commits (attachLog), and whether it does. */
  private log: EventLog | null = null;
  private toldByLog = false;

  private constructor(
    private readonly spawn: () => Worker,
    private readonly options: ProjectorThreadOptions,
    private readonly countAfter: (position: Position) => Promise<number>,
  ) {
    this.reached = new PositionWaiters(options.waitTimeoutMs ?? 15_000);
    this.reached.reach(at(0n));
    this.restartPolicy = options.restart ?? DEFAULT_RETRY;
    this.backoff = new Backoff(this.restartPolicy);
  }

  /**
   * Resolves once the thread `spawn` starts (running thread-loop.ts) has laid out the read
   * database (and dropped what it must rebuild). A first thread that exits before that rejects:
   * the process cannot serve reads, and says so at start.
   */
  static start(spawn: () => Worker, countAfter: (p: Position) => Promise<number>, options: ProjectorThreadOptions = {}): Promise<ProjectorThread> {
    const thread = new ProjectorThread(spawn, options, countAfter);
    return new Promise((resolve, reject) => {
      const worker = thread.run();
      // A thread's uncaught error can reach this thread before a `ready` it posted just before
      // dying, but never after its exit: Node hands over every message a worker posted before
      // 'exit'. So only the exit decides whether the first thread died before it was ready; one
      // that was ready and died is restarted like any other (run).
      let error: Error | null = null;
      const early = (err: Error) => (error = err);
      worker.once('error', early);
      worker.once('exit', (code) => reject(error ?? new Error(`the read-model projector thread exited (code ${code}) before it was ready`)));
      worker.on('message', (m: FromThread) => {
        if (m.type !== 'ready') return;
        worker.off('error', early);
        resolve(thread);
      });
    });
  }

  /** Starts a thread and listens to it; once it exits unasked, the next is scheduled (died). */
  private run(): Worker {
    const worker = this.spawn();
    this.worker = worker;
    this.steadySince = null;
    let error: Error | null = null;
    let ready = false;
    worker.on('message', (m: FromThread) => {
      if (m.type !== 'ready') return this.heard(m);
      ready = true;
      if (this.restarting === 'down') {
        this.restarting = 'catching';
        // The new thread hears the log's commits on a channel of its own.
        if (this.log) this.connect().catch((err) => this.options.report?.(`the read-model projector thread cannot hear the log's commits: ${String(err)}`));
      }
      if (m.rebuilt.length && m.head !== '0') this.options.report?.(`read models to build from the log (${m.head} events): ${m.rebuilt.join(', ')}`);
      this.reached.reach(at(BigInt(m.position)));
    });
    worker.on('error', (err) => (error = err));
    this.exited = new Promise((resolve) =>
      worker.once('exit', (code) => {
        resolve();
        // The first thread's start rejects instead (start); every later one is restarted.
        if (ready || this.restarting !== null) this.died(error?.message ?? `it exited (code ${code})`);
      }),
    );
    worker.unref();
    return worker;
  }

  private died(why: string): void {
    if (this.stopping) return;
    this.restarting = 'down';
    this.caughtUp = false;
    // A failing event was the dead thread's: the next one tries it again and says so itself.
    this.failure = null;
    // A thread that stayed caught up past the longest wait did not die of what killed its
    // predecessors: its successor gets the first wait again. One that never got there (it dies
    // on the same event each time) waits longer each time.
    if (this.steadySince !== null && Date.now() - this.steadySince > this.restartPolicy.maxMs) this.backoff.reset();
    const delay = this.backoff.next();
    this.options.report?.(`the read-model projector thread stopped: ${why}; restarting it in ${delay} ms`);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (!this.stopping) this.run();
    }, delay);
    this.restartTimer.unref();
  }

  private heard(m: FromThread): void {
    if (m.type === 'position') {
      if (m.caughtUp) {
        this.caughtUp = true;
        this.steadySince ??= Date.now();
      }
      if (m.caughtUp && this.restarting === 'catching') this.recovered();
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

  private recovered(): void {
    this.restarting = null;
    this.options.report?.('read models: the restarted projector thread has caught up');
  }

  /**
   * Has `log` tell the thread each of its commits directly, from the thread that commits
   * (EventLog.tellCommits): the thread applies them at once, while the log commits the next ones,
   * and a write waits for no message of its own to the thread. False where the log cannot (it
   * commits on the caller's thread): waitFor then wakes the thread.
   */
  async attachLog(log: EventLog): Promise<boolean> {
    this.log = log;
    return this.connect();
  }

  private async connect(): Promise<boolean> {
    if (!this.log?.tellCommits) return false;
    const { port1, port2 } = new MessageChannel();
    this.worker.postMessage({ type: 'commits', port: port1 } satisfies ToThread, [port1]);
    this.toldByLog = await this.log.tellCommits(port2);
    if (!this.toldByLog) port2.close();
    return this.toldByLog;
  }

  /** Resolves once the read database holds every event up to `position` (read-your-writes). */
  waitFor(position: Position): Promise<void> {
    const target = at(position.commit);
    // Already there (a read after the writes it follows): one comparison.
    if (this.reached.passed(target)) return Promise.resolve();
    // The log tells the thread of this process's commits itself; with no thread running, the next
    // one catches up from its start anyway.
    if (!this.toldByLog && this.restarting !== 'down') this.worker.postMessage({ type: 'wake' } satisfies ToThread);
    return this.reached.wait(target);
  }

  progress(): CatchUpProgress | null {
    return this.caughtUp ? null : this.latest;
  }

  async status(): Promise<FollowerStatus> {
    const commit = this.reached.position?.commit ?? 0n;
    const behind = await this.countAfter(at(commit));
    // A restarted thread that found nothing to apply (nothing was written meanwhile) never tells a position.
    if (this.restarting === 'catching' && behind === 0) this.recovered();
    const state = this.restarting !== null ? 'reconnecting' : this.failure !== null ? 'failed' : this.caughtUp || behind === 0 ? 'caught_up' : 'catching_up';
    if (state === 'caught_up') {
      this.caughtUp = true;
      this.steadySince ??= Date.now();
    }
    return { name: 'read-models', state, behind };
  }

  /** Ends the running thread as a crash would, and resolves once it has exited; it is restarted like one (tests). */
  async kill(): Promise<void> {
    if (this.restarting === 'down') return;
    const exited = this.exited;
    await this.worker.terminate();
    await exited;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.restarting === 'down') return;
    this.worker.ref();
    this.worker.postMessage({ type: 'stop' } satisfies ToThread);
    await this.exited;
  }
}
