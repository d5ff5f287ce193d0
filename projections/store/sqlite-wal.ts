import type Database from 'better-sqlite3';

/** What SQLite answers for a checkpoint: whether it gave up on a lock, the WAL's frames, and those copied. */
export interface WalCounts {
  busy: boolean;
  log: number;
  checkpointed: number;
}

/**
 * How the WAL of every SQLite file whose committing connection does not checkpoint
 * (`wal_autocheckpoint = 0`) is kept bounded: another connection checkpoints PASSIVE on a timer
 * (it copies what no reader still needs, waiting for no one), and, once the WAL holds `restartAt`
 * frames, a RESTART follows.
 *
 * A PASSIVE checkpoint alone does not bound the WAL under steady writes. A writer starts the WAL
 * over only when its transaction begins with every frame copied, and the other connection's
 * commits keep adding frames while the copy runs, so the file would grow for as long as they go
 * on. A RESTART takes the write lock, copies the few frames added since, and waits for the
 * readers still on the WAL, so the next write starts it over.
 *
 * The two files that need it differ only in what a RESTART holds up, so in how long a WAL is let
 * grow before one:
 * - the read models (`readmodels.sqlite`): the projector thread runs it between its own steps,
 *   waiting at most 50 ms for the lock and the readers, so it is cheap: at 4,000 frames (16 MB);
 * - the webhook bookkeeping (`webhooks.sqlite`, runtime/wal-checkpointer.ts): the main thread's
 *   writer holds its batches while it runs (25-35 ms, two syncs), so it waits for a long WAL:
 *   16,000 frames (64 MB at the default page size).
 */
export const READ_MODELS_WAL = { restartAt: 4_000, waitMs: 50 } as const;
export const WEBHOOKS_WAL = { restartAt: 16_000 } as const;

/** One checkpoint of the connection's database, in the mode asked. */
export function walCheckpoint(db: Database.Database, mode: 'passive' | 'restart'): WalCounts {
  const [r] = db.pragma(`wal_checkpoint(${mode === 'restart' ? 'RESTART' : 'PASSIVE'})`) as Array<{ busy: number; log: number; checkpointed: number }>;
  return { busy: r?.busy === 1, log: r?.log ?? 0, checkpointed: r?.checkpointed ?? 0 };
}

/**
 * After a checkpoint's counts: whether the next must be a RESTART, the WAL being this long and
 * not started over (a RESTART that copied every frame did start it over).
 */
export function restartDue(counts: WalCounts, wasRestart: boolean, restartAt: number): boolean {
  const restarted = wasRestart && !counts.busy && counts.checkpointed === counts.log;
  return counts.log >= restartAt && !restarted;
}

/**
 * The bound on the connection itself, at once: PASSIVE, then a RESTART when due, waiting at most
 * `waitMs` for the lock and the readers (the connection's busy timeout is set back after); if
 * that runs out, it has been a PASSIVE one.
 */
export function boundWal(db: Database.Database, restartAt: number, waitMs: number): void {
  if (!restartDue(walCheckpoint(db, 'passive'), false, restartAt)) return;
  const busyTimeout = Number(db.pragma('busy_timeout', { simple: true }));
  db.pragma(`busy_timeout = ${waitMs}`);
  try {
    walCheckpoint(db, 'restart');
  } finally {
    db.pragma(`busy_timeout = ${busyTimeout}`);
  }
}
