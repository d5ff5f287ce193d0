import type Database from 'better-sqlite3';
import type { Worker } from 'node:worker_threads';
import { restartDue, WEBHOOKS_WAL, type WalCounts } from '../projections/store/sqlite-wal.js';
import { startModuleThread } from './thread-projectors.js';

export interface CheckpointerSettings {
  file: string;
  busyTimeoutMs: number;
}
export type ToCheckpointer = { type: 'checkpoint'; id: number; mode: 'passive' | 'restart' } | { type: 'close' };
export type FromCheckpointer = ({ id: number } & WalCounts) | { id: number; error: string };

/** SQLite's own default, back in force on the writer's connection if the thread is lost. */
const SQLITE_AUTOCHECKPOINT = 1000;

/**
 * WAL checkpoints for a SQLite file that this thread writes (the webhook bookkeeping), run on a
 * thread of their own, bounded as projections/store/sqlite-wal.ts says for every such file.
 * SQLite checkpoints on the connection that commits, once the WAL passes 1,000 pages: there,
 * that was this thread's event loop blocked while pages were copied and the file synced. Here the
 * writer's connection checkpoints nothing (`wal_autocheckpoint = 0`); `committed()`, called after
 * each of its commits, asks the thread for a passive checkpoint at most once every `everyMs`.
 *
 * When a checkpoint finds the WAL long, the next one is a RESTART, and `idle()` answers only once
 * it is done: the writer (SqliteBatcher, through shareFileWith) holds its batches until then,
 * without blocking its event loop, so the RESTART neither waits for it nor makes it wait in
 * SQLite's busy handler. The next commit then starts the WAL over.
 *
 * The thread never keeps the process alive. Lost (it failed or exited), checkpoints go back to
 * the writer's connection, as SQLite does by default.
 */
export class WalCheckpointer {
  private worker: Worker | null;
  private readonly waiting = new Map<number, (a: FromCheckpointer) => void>();
  private nextId = 0;
  private askedAt = -Infinity;
  private running = false;
  private restartNext = false;
  private restarting: Promise<void> | null = null;
  private closing = false;
  private readonly everyMs: number;
  private readonly restartAt: number;
  /** Each checkpoint's answer, for tests and diagnostics. */
  last: FromCheckpointer | null = null;

  constructor(
    private readonly db: Database.Database,
    options: { everyMs?: number; restartAt?: number; busyTimeoutMs?: number } = {},
  ) {
    this.everyMs = options.everyMs ?? 250;
    this.restartAt = options.restartAt ?? WEBHOOKS_WAL.restartAt;
    const settings: CheckpointerSettings = { file: db.name, busyTimeoutMs: options.busyTimeoutMs ?? 100 };
    db.pragma('wal_autocheckpoint = 0');
    const worker = startModuleThread(import.meta.url, 'wal-checkpointer-thread', { workerData: settings, name: 'turnout-wal-checkpointer' });
    worker.unref();
    worker.on('message', (a: FromCheckpointer) => {
      const resolve = this.waiting.get(a.id);
      this.waiting.delete(a.id);
      // Closing, it stays referenced until it has exited: the process waits for the file's close.
      if (!this.waiting.size && !this.closing) worker.unref();
      resolve?.(a);
    });
    worker.on('error', () => this.lost(worker));
    worker.on('exit', () => this.lost(worker));
    this.worker = worker;
  }

  /** After a commit on the writer's connection: a checkpoint, if none ran in the last `everyMs`. */
  committed(): void {
    const now = Date.now();
    if (!this.worker || this.running || now - this.askedAt < this.everyMs) return;
    this.askedAt = now;
    void this.checkpoint();
  }

  /** Resolves once no RESTART is under way (at once, mostly): the writer's next commit may begin. */
  idle(): Promise<void> {
    return this.restarting ?? Promise.resolve();
  }

  /** One checkpoint now (a RESTART if the last one found the WAL long), answered with SQLite's counts. */
  async checkpoint(): Promise<FromCheckpointer | null> {
    if (!this.worker) return null;
    this.running = true;
    const restart = this.restartNext;
    const answer = this.ask(restart ? 'restart' : 'passive');
    if (restart) this.restarting = answer.then(() => undefined);
    try {
      const a = await answer;
      this.last = a;
      this.restartNext = 'log' in a && restartDue(a, restart, this.restartAt);
      return a;
    } finally {
      this.running = false;
      if (restart) this.restarting = null;
    }
  }

  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.worker = null;
    this.closing = true;
    worker.ref();
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ type: 'close' } satisfies ToCheckpointer);
    await exited;
    this.answerAll('the checkpointer is closed');
  }

  private ask(mode: 'passive' | 'restart'): Promise<FromCheckpointer> {
    const worker = this.worker;
    if (!worker) return Promise.resolve({ id: -1, error: 'the checkpointer is closed' });
    const id = this.nextId++;
    worker.ref();
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      worker.postMessage({ type: 'checkpoint', id, mode } satisfies ToCheckpointer);
    });
  }

  private lost(worker: Worker): void {
    if (this.worker !== worker) return;
    this.worker = null;
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT}`);
    this.answerAll('the checkpointer thread stopped');
  }

  private answerAll(error: string): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const resolve of waiting) resolve({ id: -1, error });
  }
}
