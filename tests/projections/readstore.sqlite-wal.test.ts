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
 * commits the inline projection's transactions: each holds the write lock about 5 ms, and the next
 * begins about 2 ms after (the log's own commit in between), until told to stop.
 */
function startWriter(file: string) {
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const Database = require(workerData.driver);
     const db = new Database(workerData.file);
     db.pragma('journal_mode = WAL');
     db.pragma('synchronous = NORMAL');
     db.pragma('busy_timeout = 1000');
     db.pragma('wal_autocheckpoint = 0');
     const insert = db.prepare('INSERT INTO t (x) VALUES (randomblob(3000))');
     const sleep = (ms) => Atomics.wait(workerData.stop, 0, 0, ms);
     let commits = 0;
     while (Atomics.load(workerData.stop, 0) === 0) {
       db.transaction(() => { for (let i = 0; i < 20; i++) insert.run(); sleep(5); }).immediate();
       commits++;
       sleep(2);
     }
     db.close();
     parentPort.postMessage(commits);`,
    { eval: true, workerData: { file, stop, driver: createRequire(import.meta.url).resolve('better-sqlite3') } },
  );
  return {
    stop: () =>
      new Promise<number>((resolve) => {
        worker.once('message', resolve);
        Atomics.store(stop, 0, 1);
        Atomics.notify(stop, 0);
      }),
  };
}

describe("the read database's WAL, checkpointed by another connection than the one that commits", () => {
  /**
   * Runs the writer for `ms` while `core` checkpoints every 20 ms; answers the WAL's largest frame
   * count seen, and how often it was seen to start over.
   */
  async function underSteadyWrites(checkpoint: (core: SqliteReadCore) => void, ms = 1_500): Promise<{ most: number; restarts: number }> {
    const dir = mkdtempSync(join(tmpdir(), 'turnout-wal-'));
    dirs.push(dir);
    const file = join(dir, 'readmodels.sqlite');
    const core = new SqliteReadCore(file);
    core.db.exec('CREATE TABLE t (x BLOB)');
    const frames = () => walIndex(file).frames;
    const writer = startWriter(file);
    let most = 0;
    let restarts = 0;
    let before = 0;
    const until = Date.now() + ms;
    while (Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      checkpoint(core);
      const now = frames();
      if (now < before) restarts++;
      most = Math.max(most, now);
      before = now;
    }
    expect(await writer.stop()).toBeGreaterThan(50);
    core.close();
    return { most, restarts };
  }

  it('keeps growing under steady writes with passive checkpoints alone', async () => {
    // What the projector thread did at first: the frames are copied, and yet a write seldom starts
    // the WAL over, because it began while the copy ran (about 4,500 frames in 1.5 s here).
    const { most } = await underSteadyWrites((core) => core.checkpointWal(Infinity));
    expect(most).toBeGreaterThan(2_500);
  });

  it('starts over once it holds the given number of frames', async () => {
    const { most, restarts } = await underSteadyWrites((core) => core.checkpointWal(1_000));
    expect(restarts).toBeGreaterThan(0);
    // 1,000 and what one 20 ms turn adds (about 70 frames here).
    expect(most).toBeLessThan(2_500);
  });
});
