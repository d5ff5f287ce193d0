import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NO_STREAM } from '../../eventlog/port.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { batcherFor, shareFileWith } from '../../dispatcher/queue/sqlite-batch.js';

const metadata = { team: 1, source: 'Application' as const, keyName: null, correlationId: 'c', at: '2024-05-01T12:00:00.000Z' };
const append = (log: SqliteEventLog, stream: string) => log.append(stream, [{ type: 'X', data: {}, metadata }], NO_STREAM);

/** A log on a file of its own (committing on its writer thread) for one test, removed after. */
async function withLog(test: (log: SqliteEventLog) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'turnout-batch-'));
  const log = new SqliteEventLog(path.join(dir, 'log.sqlite'));
  try {
    await test(log);
  } finally {
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('webhook bookkeeping on the event log’s connection', () => {
  it('commits without an fsync but leaves the log’s appends at synchronous=FULL', () =>
    withLog(async (log) => {
      const seen: number[] = [];
      log.database.exec('CREATE TABLE t (x INTEGER)');
      await batcherFor(log.database).run(() => {
        seen.push(Number(log.database.pragma('synchronous', { simple: true })));
        log.database.prepare('INSERT INTO t VALUES (1)').run();
      });
      expect(seen).toEqual([1]); // NORMAL inside the batch
      expect(Number(log.database.pragma('synchronous', { simple: true }))).toBe(2); // FULL again
      await append(log, 's-1');
      expect(Number(log.database.pragma('synchronous', { simple: true }))).toBe(2);
      expect(await log.writerSettings()).toEqual({ journalMode: 'wal', synchronous: 2 });
    }));

  it('waits until the log’s writer thread has committed every batch, so it never waits for the write lock', () =>
    withLog(async (log) => {
      log.database.exec('CREATE TABLE t (x INTEGER)');
      shareFileWith(log.database, () => log.writerIdle());
      // What the writer thread had not committed yet each time a bookkeeping transaction began.
      const inFlight: number[] = [];
      const transaction = log.database.transaction.bind(log.database);
      log.database.transaction = ((fn: () => void) => {
        inFlight.push(log.commitsNotCommitted);
        return transaction(fn);
      }) as typeof log.database.transaction;
      const insert = log.database.prepare('INSERT INTO t VALUES (?)');
      const work: Array<Promise<unknown>> = [];
      for (let round = 0; round < 30; round++) {
        for (let i = 0; i < 10; i++) work.push(append(log, `s-${round}-${i}`));
        work.push(batcherFor(log.database).run(() => void insert.run(round)));
        await new Promise((resolve) => setImmediate(resolve));
      }
      await Promise.all(work);
      expect(inFlight.length).toBeGreaterThan(0);
      expect(inFlight.every((n) => n === 0)).toBe(true);
      expect(log.database.prepare('SELECT COUNT(*) AS n FROM t').get()).toEqual({ n: 30n });
    }));

  it('holds the log’s next batch while someone waits for the writer thread to be idle, so the wait ends', () =>
    withLog(async (log) => {
      const a = append(log, 'a-1');
      await new Promise((resolve) => setImmediate(resolve));
      expect(log.commitsInFlight).toBe(1);
      let bDone = false;
      const b = append(log, 'b-1').then(() => void (bDone = true));
      const atIdle = await log.writerIdle().then(() => ({ inFlight: log.commitsNotCommitted, bDone }));
      // Under steady appends a new batch would otherwise always be on its way.
      expect(atIdle).toEqual({ inFlight: 0, bDone: false });
      await Promise.all([a, b]);
      expect(bDone).toBe(true);
    }));

  it('commits while the writer thread still runs its after-commit work on another file, not after it', () =>
    withLog(async (log) => {
      log.database.exec('CREATE TABLE t (x INTEGER)');
      shareFileWith(log.database, () => log.writerIdle());
      const slow = { module: new URL('../support/slow-after-commit.js', import.meta.url).href, options: { ms: 300 } };
      expect(await log.runAfterEachCommit(slow, () => undefined)).toBe(true);
      const appended = append(log, 'a-1');
      await new Promise((resolve) => setImmediate(resolve));
      expect(log.commitsInFlight).toBe(1);
      const t0 = performance.now();
      await batcherFor(log.database).run(() => void log.database.prepare('INSERT INTO t VALUES (1)').run());
      // Committed once the append was, while its after-commit work (300 ms) still held it unanswered.
      expect({ waitedMs: Math.round(performance.now() - t0) < 200, inFlight: log.commitsInFlight, notCommitted: log.commitsNotCommitted }).toEqual({
        waitedMs: true,
        inFlight: 1,
        notCommitted: 0,
      });
      await appended;
      await new Promise((resolve) => setImmediate(resolve));
      expect(log.commitsInFlight).toBe(0);
    }));

  it('finishes a write queued after another in the same transaction, and not at all when the first fails', () =>
    withLog(async (log) => {
      const db = log.database;
      db.exec('CREATE TABLE t (x INTEGER NOT NULL)');
      const insert = db.prepare('INSERT INTO t VALUES (?)');
      // What the transaction had written when each dependent write ran: the first's row was there.
      const seen: number[] = [];
      const count = () => Number((db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: bigint }).n);
      const batcher = batcherFor(db);
      const first = batcher.run(() => void insert.run(1));
      const second = batcher.run(() => (seen.push(count()), void insert.run(2)), first);
      await Promise.all([first, second]);
      expect(seen).toEqual([1]);

      const failing = batcher.run(() => void insert.run(null));
      const skipped = batcher.run(() => void insert.run(3), failing);
      const independent = batcher.run(() => void insert.run(4));
      await expect(failing).rejects.toThrow(/NOT NULL/);
      await expect(skipped).rejects.toThrow(/NOT NULL/);
      await independent;
      expect(db.prepare('SELECT x FROM t ORDER BY x').pluck().all()).toEqual([1n, 2n, 4n]);
      // After a write already committed (or failed) in an earlier batch, as its outcome says.
      await batcher.run(() => void insert.run(5), first);
      await expect(batcher.run(() => void insert.run(6), failing)).rejects.toThrow(/NOT NULL/);
      expect(count()).toBe(4);
    }));

  it('leaves the WAL checkpoints of its commits to the log’s writer thread, which keeps the WAL from growing', () =>
    withLog(async (log) => {
      const db = log.database;
      const checkpoint = log.checkpointOnWriter()!;
      let told = 0;
      shareFileWith(db, () => log.writerIdle(), () => told++);
      expect(Number(db.pragma('wal_autocheckpoint', { simple: true }))).toBe(0);
      db.exec('CREATE TABLE t (x BLOB)');
      const insert = db.prepare('INSERT INTO t VALUES (?)');
      // About 600 pages a commit, under SQLite's default of a checkpoint every 1,000.
      const write = () => batcherFor(db).run(() => {
        for (let i = 0; i < 600; i++) insert.run(randomBytes(4000));
      });
      const walSize = () => statSync(`${db.name}-wal`).size;
      await write();
      await write();
      expect(told).toBe(2);
      const grown = walSize();
      await checkpoint();
      // Checkpointed by the writer thread: the next commit starts the WAL over instead of growing it.
      await write();
      expect(walSize()).toBeLessThanOrEqual(grown);
      expect(told).toBe(3);
    }));
});
