import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteReadCore } from '../../projections/store/sqlite-core.js';
import { walIndex } from '../support/wal-index.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/**
 * A writer on a thread of its own that commits without checkpointing, as the log's writer thread
 * once committed its inline projection's transactions (a writer beside the projector thread): each holds the write lock about 5 ms, and the next
 * begins about 2 ms after (the log's own commit in between), until told to stop. It counts its
 * commits in `state[1]`.
 * - `maxAhead`: it waits between two commits while it is that many past `state[2]`, the count the
 *   checkpointer last saw, so a slow turn of the checkpointer on a busy machine never lets it write
 *   more than that between two checkpoints.
 * - `lockstep`: instead of its 5 ms inside a transaction, it says so (`state[3]`) and waits there
 *   for the checkpointer's turn, so that every checkpoint overlaps a write, as on a machine where
 *   the writer is seldom between two transactions.
 */
function startWriter(file: string, mode: { maxAhead?: number; lockstep?: boolean }) {
  const state = new Int32Array(new SharedArrayBuffer(16));
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const Database = require(workerData.driver);
     const { state, maxAhead, lockstep } = workerData;
     const db = new Database(workerData.file);
     db.pragma('journal_mode = WAL');
     db.pragma('synchronous = NORMAL');
     db.pragma('busy_timeout = 1000');
     db.pragma('wal_autocheckpoint = 0');
     const insert = db.prepare('INSERT INTO t (x) VALUES (randomblob(3000))');
     const sleep = (ms) => Atomics.wait(state, 0, 0, ms);
     const running = () => Atomics.load(state, 0) === 0;
     const turnOf = () => {
       Atomics.store(state, 3, 1);
       while (running() && Atomics.load(state, 3) === 1) Atomics.wait(state, 3, 1, 100);
     };
     while (running()) {
       while (maxAhead > 0 && running() && Atomics.load(state, 1) - Atomics.load(state, 2) >= maxAhead) Atomics.wait(state, 2, Atomics.load(state, 2), 100);
       db.transaction(() => { for (let i = 0; i < 20; i++) insert.run(); if (lockstep) turnOf(); else sleep(5); }).immediate();
       Atomics.add(state, 1, 1);
       sleep(2);
     }
     db.close();
     parentPort.postMessage(Atomics.load(state, 1));`,
    { eval: true, workerData: { file, state, maxAhead: mode.maxAhead ?? 0, lockstep: !!mode.lockstep, driver: createRequire(import.meta.url).resolve('better-sqlite3') } },
  );
  return {
    commits: () => Atomics.load(state, 1),
    /** Until the writer is inside a transaction, waiting for the checkpointer (lockstep). */
    inTransaction: async () => {
      while (Atomics.load(state, 3) === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    },
    /** The checkpointer's turn is over: it has seen the writer's commits up to now. */
    seen: () => {
      Atomics.store(state, 2, Atomics.load(state, 1));
      Atomics.notify(state, 2);
      Atomics.store(state, 3, 0);
      Atomics.notify(state, 3);
    },
    stop: () =>
      new Promise<number>((resolve) => {
        worker.once('message', resolve);
        Atomics.store(state, 0, 1);
        Atomics.notify(state, 0);
        Atomics.notify(state, 2);
        Atomics.notify(state, 3);
      }),
  };
}

describe("the read database's WAL, checkpointed by another connection than the one that commits", () => {
  /** Commits the writer makes in a run (unless told otherwise): some 5,000 frames, whatever the machine's speed. */
  const COMMITS = 250;

  /**
   * Runs the writer for COMMITS commits while `core` checkpoints every 20 ms (in lockstep, each
   * time the writer is inside a transaction); answers the WAL's largest frame count seen, and how
   * often it was seen to start over. A run counts commits, not time: on a busy machine the writer
   * makes fewer in a given time, and the WAL grows less.
   */
  async function underSteadyWrites(checkpoint: (core: SqliteReadCore) => void, mode: { maxAhead?: number; lockstep?: boolean; commits?: number }): Promise<{ most: number; restarts: number }> {
    const commits = mode.commits ?? COMMITS;
    const dir = mkdtempSync(join(tmpdir(), 'turnout-wal-'));
    dirs.push(dir);
    const file = join(dir, 'readmodels.sqlite');
    const core = new SqliteReadCore(file);
    core.db.exec('CREATE TABLE t (x BLOB)');
    const frames = () => walIndex(file).frames;
    const writer = startWriter(file, mode);
    let most = 0;
    let restarts = 0;
    let before = 0;
    while (writer.commits() < commits) {
      if (mode.lockstep) await writer.inTransaction();
      else await new Promise((resolve) => setTimeout(resolve, 20));
      checkpoint(core);
      const now = frames();
      writer.seen();
      if (now < before) restarts++;
      most = Math.max(most, now);
      before = now;
    }
    expect(await writer.stop()).toBeGreaterThanOrEqual(commits);
    core.close();
    return { most, restarts };
  }

  it('keeps growing under steady writes with passive checkpoints alone', async () => {
    // What the projector thread did at first: the frames are copied, and yet a write seldom starts
    // the WAL over, because it began while the copy ran: here every time, and the WAL holds all
    // the frames written (150 commits, some 3,400).
    const { most, restarts } = await underSteadyWrites((core) => core.checkpointWal(Infinity), { lockstep: true, commits: 150 });
    expect(restarts).toBe(0);
    expect(most).toBeGreaterThan(2_500);
  });

  it('starts over once it holds the given number of frames', async () => {
    const { most, restarts } = await underSteadyWrites((core) => core.checkpointWal(1_000), { maxAhead: 8 });
    expect(restarts).toBeGreaterThan(0);
    // 1,000 and what the writer adds between two turns: at most 8 commits (some 170 frames).
    expect(most).toBeLessThan(2_500);
  });
});
