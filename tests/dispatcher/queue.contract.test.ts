import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryQueue, DeliveryTask, Lease, Outcome } from '../../dispatcher/queue/port.js';
import { SqliteDeliveryQueue } from '../../dispatcher/queue/sqlite.js';
import { natsAvailable, startNatsServer } from './nats-server.js';
import { until } from './support.js';

/** Opens a queue over durable state that survives `reopen` (a process restart). */
interface Adapter {
  open(): Promise<DeliveryQueue>;
  cleanup(): Promise<void>;
}

const task = (id: string): DeliveryTask => ({ id, endpointId: 1, team: 1, eventId: `evt_${id}_1`, eventType: 'constituent.created', body: `{"id":"${id}"}` });
const pos = (n: number) => ({ commit: BigInt(n), prepare: BigInt(n) });

function contract(name: string, make: () => Promise<Adapter>, skip = false) {
  describe.skipIf(skip)(`the ${name} delivery queue`, () => {
    let adapter: Adapter;
    beforeAll(async () => {
      adapter = await make();
    });
    afterAll(() => adapter?.cleanup());

    it('keeps the checkpoint with the tasks and hands each task out once, as attempt 1', async () => {
      const q = await adapter.open();
      expect(await q.checkpoint()).toBeNull();
      await q.enqueue([task('a1'), task('a2')], pos(7));
      await q.enqueue([task('a1')], pos(8)); // a replayed event: the same id is not enqueued twice
      expect(await q.checkpoint()).toEqual(pos(8));
      const seen: Lease[] = [];
      const c = q.consume(async (l) => (seen.push(l), { kind: 'done' }), { concurrency: 4 });
      await until(() => seen.length >= 2, 8000, 'two tasks');
      await c.stop();
      expect(seen.map((l) => [l.task.id, l.attempt]).sort()).toEqual([['a1', 1], ['a2', 1]]);
      expect(seen[0].task.body).toMatch(/^\{"id":"a\d"\}$/);
      await q.close();
    });

    it('adds tasks outside the log order without moving the checkpoint, once per id, with their replay', async () => {
      const q = await adapter.open();
      await q.enqueue([], pos(20));
      await q.add([{ ...task('r1'), replay: 'rpl_x' }, task('r2')]);
      await q.add([{ ...task('r1'), replay: 'rpl_x' }]);
      expect(await q.checkpoint()).toEqual(pos(20));
      const seen: Lease[] = [];
      const c = q.consume(async (l) => (seen.push(l), { kind: 'done' }), { concurrency: 4 });
      await until(() => seen.length >= 2, 8000, 'both tasks');
      await c.stop();
      expect(seen.map((l) => [l.task.id, l.task.replay]).sort()).toEqual([['r1', 'rpl_x'], ['r2', undefined]]);
      await q.close();
    });

    it('redelivers a task after the delay it asked for, counting attempts', async () => {
      const q = await adapter.open();
      await q.enqueue([task('b1')], pos(9));
      const attempts: Array<{ attempt: number; at: number }> = [];
      const c = q.consume(async (l): Promise<Outcome> => {
        attempts.push({ attempt: l.attempt, at: Date.now() });
        return l.attempt < 3 ? { kind: 'retry', delayMs: 150 } : { kind: 'done' };
      }, { concurrency: 2 });
      await until(() => attempts.length >= 3, 8000, 'three attempts');
      await c.stop();
      expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
      expect(attempts[1].at - attempts[0].at).toBeGreaterThanOrEqual(120);
      await q.close();
    });

    it('keeps unfinished tasks and the checkpoint across a restart', async () => {
      const q1 = await adapter.open();
      await q1.enqueue([task('c1')], pos(11));
      await q1.close();
      const q2 = await adapter.open();
      expect(await q2.checkpoint()).toEqual(pos(11));
      const seen: string[] = [];
      const c = q2.consume(async (l) => (seen.push(l.task.id), { kind: 'done' }), { concurrency: 1 });
      await until(() => seen.includes('c1'), 8000, 'c1 after restart');
      await c.stop();
      await q2.close();
    });

    it('never runs more attempts at once than its concurrency', async () => {
      const q = await adapter.open();
      await q.enqueue(Array.from({ length: 12 }, (_, i) => task(`d${i}`)), pos(12));
      let running = 0;
      let peak = 0;
      let done = 0;
      const c = q.consume(async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 20));
        running--;
        done++;
        return { kind: 'done' };
      }, { concurrency: 3 });
      await until(() => done >= 12, 8000, 'twelve tasks');
      await c.stop();
      expect(peak).toBeLessThanOrEqual(3);
      expect(peak).toBeGreaterThan(1);
      await q.close();
    });

    // Last: it leaves a task waiting for a retry an hour off.
    it('counts its tasks, due or waiting for a retry, and keeps the trace of the write that caused each', async () => {
      const q = await adapter.open();
      const before = await q.depth();
      const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      await q.enqueue([{ ...task('q1'), traceparent: tp }, task('q2')], pos(30));
      expect(await q.depth()).toBe(before + 2);
      const seen: Lease[] = [];
      // q1 asks for a retry far off: it stays in the queue (waiting), q2 leaves it.
      const c = q.consume(async (l) => (seen.push(l), l.task.id === 'q1' ? { kind: 'retry', delayMs: 60_000 } : { kind: 'done' }), { concurrency: 4 });
      await until(() => seen.length >= 2, 8000, 'both tasks');
      await until(async () => (await q.depth()) === before + 1, 8000, 'q2 gone, q1 waiting');
      await c.stop();
      expect(Object.fromEntries(seen.map((l) => [l.task.id, l.task.traceparent]))).toEqual({ q1: tp, q2: undefined });
      await q.close();
    });
  });
}

contract('embedded SQLite', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-q-'));
  const file = path.join(dir, 'q.sqlite');
  const dbs: Database.Database[] = [];
  return {
    async open() {
      const db = new Database(file);
      db.pragma('journal_mode = WAL');
      dbs.push(db);
      return new SqliteDeliveryQueue(db);
    },
    async cleanup() {
      for (const db of dbs) db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

contract(
  'NATS JetStream',
  async () => {
    const server = await startNatsServer();
    const { NatsDeliveryQueue } = await import('../../dispatcher/queue/nats.js');
    return {
      open: () => NatsDeliveryQueue.connect(server.url, { ackWaitMs: 5000 }),
      cleanup: () => server.stop(),
    };
  },
  !natsAvailable,
);
