import { describe, expect, it } from 'vitest';
import type { Position, RecordedEvent } from '../../domain/shared/events.js';
import { ANY } from '../../eventlog/port.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { ProjectionRunner } from '../../projections/engine/main-thread.js';
import type { ReadStore } from '../../projections/store/port.js';
import { MemoryReadStore } from '../support/memory-store/memory.js';
import { count, event, failingOnPoison, sleep, tally } from '../support/runner-fixtures.js';

/** The review of f26ce24 (a chunk cut where a version's lease goes, checkpoints moved by compare-and-set): its two tests, each failing on it. */
describe('the projection runner where a checkpoint store fails or a checkpoint was moved', () => {
  it('keeps applying, and reports no event it does not have, when the checkpoint store fails as a batch is stored (no transactions)', async () => {
    const log = new SqliteEventLog(':memory:');
    const store = new MemoryReadStore();
    let failOnce = false;
    const setCheckpoint = store.setCheckpoint.bind(store);
    store.setCheckpoint = async (name: string, at: Position) => {
      if (failOnce) {
        failOnce = false;
        throw new Error('transient store error');
      }
      return setCheckpoint(name, at);
    };
    const errors: Array<RecordedEvent | undefined> = [];
    const reports: string[] = [];
    // checkpointEvery 1: each chunk stores in line, as a batch of 256 does.
    const runner = new ProjectionRunner(log, store, [tally('tally', 1)], { checkpointEvery: 1, retryInitialMs: 10, retryMaxMs: 20, onError: (_e, ev) => errors.push(ev), report: (m) => reports.push(m) });
    await runner.start();
    try {
      failOnce = true;
      const a = await log.append('a-1', [event('Something')], ANY);
      await runner.waitFor(a.position);
      await sleep(300);
      const b = await log.append('b-1', [event('Something')], ANY);
      await runner.waitFor(b.position);
      await sleep(300);
      expect({ n: await count(store, 'tally_v1'), errors, state: (await runner.status()).state }).toEqual({ n: 2, errors: [], state: 'caught_up' });
      expect(reports.some((m) => /projection checkpoint: transient store error/.test(m))).toBe(true);
      // The checkpoint is stored once the store is back, without another event.
      expect(await store.getCheckpoint('projector:tally@v1')).toEqual(b.position);
    } finally {
      await runner.stop();
      await log.close();
    }
  });

  it('waits between tries, reading the checkpoints again, when the events before a failing one find their checkpoint moved (transactions)', async () => {
    const log = new SqliteEventLog(':memory:');
    const store = new MemoryReadStore();
    // Transactions as MongoDB's on a replica set (the step's checkpoints saved inside it), each a turn of the event loop.
    (store as unknown as { transactions: () => Promise<unknown> }).transactions = async () => ({
      run: async (work: (s: ReadStore) => Promise<unknown>) => {
        await new Promise(setImmediate);
        return work(store);
      },
    });
    let poisonTries = 0;
    const poison = failingOnPoison('poison', () => (poisonTries++, true));
    const reports: string[] = [];
    const runner = new ProjectionRunner(log, store, [tally('tally', 1), poison], { retryInitialMs: 200, retryMaxMs: 200, report: (m) => reports.push(m) });
    await runner.start();
    try {
      const first = await log.append('a-1', [event('Something')], ANY);
      await runner.waitFor(first.position);
      // Another writer moved tally's checkpoint: what this runner knows of it is stale.
      await store.setCheckpoint('projector:tally@v1', { commit: first.position.commit, prepare: first.position.prepare + 1n });
      // One chunk: an event that applies, then one that keeps failing.
      await log.append('b-1', [event('Something'), event('Poison')], ANY);
      await sleep(600);
      // At 200 ms between tries, 3 or 4 in 600 ms (it tried without waiting: thousands).
      expect(poisonTries).toBeLessThanOrEqual(6);
      expect(reports.some((m) => /checkpoint projector:tally@v1 was moved by another writer; going on from its checkpoints/.test(m))).toBe(true);
    } finally {
      await runner.stop();
      await log.close();
    }
  });
});
