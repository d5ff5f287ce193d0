import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { batcherFor, shareFileWith } from '../../dispatcher/queue/sqlite-batch.js';

/** A WAL database on a file of its own, at the given synchronous setting, for one test. */
async function withDb(synchronous: 'FULL' | 'NORMAL', test: (db: Database.Database) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'turnout-batch-'));
  const db = new Database(path.join(dir, 'webhooks.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  db.exec('CREATE TABLE t (x INTEGER NOT NULL)');
  try {
    await test(db);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('the webhook tables’ group commit', () => {
  it('commits at synchronous=NORMAL and gives a connection set to more its own setting back', () =>
    withDb('FULL', async (db) => {
      const seen: number[] = [];
      await batcherFor(db).run(() => {
        seen.push(Number(db.pragma('synchronous', { simple: true })));
        db.prepare('INSERT INTO t VALUES (1)').run();
      });
      expect(seen).toEqual([1]); // NORMAL inside the batch
      expect(Number(db.pragma('synchronous', { simple: true }))).toBe(2); // FULL again
    }));

  it('changes nothing on a connection already at NORMAL (the webhook database)', () =>
    withDb('NORMAL', async (db) => {
      const batcher = batcherFor(db);
      const pragma = db.pragma.bind(db);
      const asked: string[] = [];
      db.pragma = ((source: string, options?: Database.PragmaOptions) => (asked.push(source), pragma(source, options))) as typeof db.pragma;
      await Promise.all([1, 2, 3].map((x) => batcher.run(() => void db.prepare('INSERT INTO t VALUES (?)').run(x))));
      expect(asked).toEqual([]);
      expect(db.prepare('SELECT COUNT(*) FROM t').pluck().get()).toBe(3);
    }));

  it('shares one transaction among the writes of a turn', () =>
    withDb('NORMAL', async (db) => {
      let transactions = 0;
      const transaction = db.transaction.bind(db);
      db.transaction = ((fn: () => void) => (transactions++, transaction(fn))) as typeof db.transaction;
      const insert = db.prepare('INSERT INTO t VALUES (?)');
      await Promise.all(Array.from({ length: 20 }, (_, i) => batcherFor(db).run(() => void insert.run(i))));
      expect({ transactions, rows: db.prepare('SELECT COUNT(*) FROM t').pluck().get() }).toEqual({ transactions: 1, rows: 20 });
    }));

  it('waits, without blocking the event loop, until another writer of the file is idle, and tells it of each commit', () =>
    withDb('NORMAL', async (db) => {
      let release!: () => void;
      let busy: Promise<void> | null = new Promise<void>((resolve) => (release = resolve));
      let told = 0;
      shareFileWith(db, () => busy ?? Promise.resolve(), () => told++);
      const insert = db.prepare('INSERT INTO t VALUES (?)');
      let committed = false;
      const first = batcherFor(db).run(() => void insert.run(1)).then(() => void (committed = true));
      // Turns go by (the loop is free) and nothing commits while the other writer holds the file.
      for (let i = 0; i < 5; i++) await turn();
      expect({ committed, told, rows: db.prepare('SELECT COUNT(*) FROM t').pluck().get() }).toEqual({ committed: false, told: 0, rows: 0 });
      busy = null;
      release();
      await first;
      expect({ committed, told }).toEqual({ committed: true, told: 1 });
      await batcherFor(db).run(() => void insert.run(2));
      expect(told).toBe(2);
    }));

  it('finishes a write queued after another in the same transaction, and not at all when the first fails', () =>
    withDb('NORMAL', async (db) => {
      const insert = db.prepare('INSERT INTO t VALUES (?)');
      // What the transaction had written when each dependent write ran: the first's row was there.
      const seen: number[] = [];
      const count = () => Number(db.prepare('SELECT COUNT(*) AS n FROM t').pluck().get());
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
      expect(db.prepare('SELECT x FROM t ORDER BY x').pluck().all()).toEqual([1, 2, 4]);
      // After a write already committed (or failed) in an earlier batch, as its outcome says.
      await batcher.run(() => void insert.run(5), first);
      await expect(batcher.run(() => void insert.run(6), failing)).rejects.toThrow(/NOT NULL/);
      expect(count()).toBe(4);
    }));
});
