import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NO_STREAM } from '../../commands/eventlog/port.js';
import { SqliteEventLog } from '../../commands/eventlog/sqlite.js';
import { batcherFor, shareFileWith } from '../../dispatcher/queue/sqlite-batch.js';

describe('webhook bookkeeping on the event log’s connection', () => {
  it('commits without an fsync but leaves the log’s appends at synchronous=FULL', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'turnout-batch-'));
    const log = new SqliteEventLog(path.join(dir, 'log.sqlite'));
    try {
      const seen: number[] = [];
      log.database.exec('CREATE TABLE t (x INTEGER)');
      await batcherFor(log.database).run(() => {
        seen.push(Number(log.database.pragma('synchronous', { simple: true })));
        log.database.prepare('INSERT INTO t VALUES (1)').run();
      });
      expect(seen).toEqual([1]); // NORMAL inside the batch
      expect(Number(log.database.pragma('synchronous', { simple: true }))).toBe(2); // FULL again
      await log.append('s-1', [{ type: 'X', data: {}, metadata: { team: 1, source: 'Application', keyName: null, correlationId: 'c', at: new Date().toISOString() } }], NO_STREAM);
      expect(Number(log.database.pragma('synchronous', { simple: true }))).toBe(2);
    } finally {
      await log.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('waits until the log’s writer thread holds no batch, so it never waits for the write lock', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'turnout-batch-'));
    const log = new SqliteEventLog(path.join(dir, 'log.sqlite'));
    try {
      log.database.exec('CREATE TABLE t (x INTEGER)');
      shareFileWith(log.database, () => log.writerIdle());
      // What the writer thread had in flight each time a bookkeeping transaction began.
      const inFlight: number[] = [];
      const transaction = log.database.transaction.bind(log.database);
      log.database.transaction = ((fn: () => void) => {
        inFlight.push(log.commitsInFlight);
        return transaction(fn);
      }) as typeof log.database.transaction;
      const insert = log.database.prepare('INSERT INTO t VALUES (?)');
      const metadata = { team: 1, source: 'Application' as const, keyName: null, correlationId: 'c', at: new Date().toISOString() };
      const work: Array<Promise<unknown>> = [];
      for (let round = 0; round < 30; round++) {
        for (let i = 0; i < 10; i++) work.push(log.append(`s-${round}-${i}`, [{ type: 'X', data: {}, metadata }], NO_STREAM));
        work.push(batcherFor(log.database).run(() => void insert.run(round)));
        await new Promise((resolve) => setImmediate(resolve));
      }
      await Promise.all(work);
      expect(inFlight.length).toBeGreaterThan(0);
      expect(inFlight.every((n) => n === 0)).toBe(true);
      expect(log.database.prepare('SELECT COUNT(*) AS n FROM t').get()).toEqual({ n: 30n });
    } finally {
      await log.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('holds the log’s next batch while someone waits for the writer thread to be idle, so the wait ends', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'turnout-batch-'));
    const log = new SqliteEventLog(path.join(dir, 'log.sqlite'));
    const metadata = { team: 1, source: 'Application' as const, keyName: null, correlationId: 'c', at: new Date().toISOString() };
    try {
      const a = log.append('a-1', [{ type: 'X', data: {}, metadata }], NO_STREAM);
      await new Promise((resolve) => setImmediate(resolve));
      expect(log.commitsInFlight).toBe(1);
      let bDone = false;
      const b = log.append('b-1', [{ type: 'X', data: {}, metadata }], NO_STREAM).then(() => void (bDone = true));
      const atIdle = await log.writerIdle().then(() => ({ inFlight: log.commitsInFlight, bDone }));
      // Under steady appends a new batch would otherwise always be on its way.
      expect(atIdle).toEqual({ inFlight: 0, bDone: false });
      await Promise.all([a, b]);
      expect(bDone).toBe(true);
    } finally {
      await log.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

