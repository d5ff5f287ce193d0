import { describe, expect, it } from 'vitest';
import type { Position } from '../../domain/shared/events.js';
import { ANY } from '../../eventlog/port.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { ProjectionRunner } from '../../projections/engine/main-thread.js';
import { MemoryReadStore } from '../support/memory-store/memory.js';
import { count, event, failingOnPoison, sleep, tally, withoutCheckpoints } from '../support/runner-fixtures.js';

describe('the projection runner stops promptly and writes nothing after (no ownership, no transactions; the review of 34ece33)', () => {
  it('stop() is not held for a full backoff when it comes while the pre-wait checkpoint store runs', async () => {
    const log = new SqliteEventLog(':memory:');
    const store = new MemoryReadStore();
    let slow = false;
    let storeStarted!: () => void;
    const started = new Promise<void>((r) => (storeStarted = r));
    const setCheckpoint = store.setCheckpoint.bind(store);
    store.setCheckpoint = async (name: string, at: Position) => {
      if (slow) {
        storeStarted();
        await sleep(300);
      }
      return setCheckpoint(name, at);
    };
    const poison = failingOnPoison('poison');
    const runner = new ProjectionRunner(log, store, [tally('tally', 1), poison], { retryInitialMs: 4_000, retryMaxMs: 4_000 });
    await runner.start();
    slow = true;
    // One chunk: an event that applies (stored before the wait), then one that keeps failing.
    await log.append('b-1', [event('Something'), event('Poison')], ANY);
    await started; // the store before the retry's wait is under way
    await sleep(20);
    const t0 = Date.now();
    await runner.stop();
    const stopMs = Date.now() - t0;
    await log.close();
    expect(stopMs).toBeLessThan(1_500);
  }, 15_000);

  it('writes no checkpoint after stop() resolved (a store timer fired during the last chunk)', async () => {
    const base = new SqliteEventLog(':memory:');
    const log = withoutCheckpoints(base);
    const store = new MemoryReadStore();
    let stopped = false;
    const late: string[] = [];
    const setCheckpoint = store.setCheckpoint.bind(store);
    store.setCheckpoint = async (name: string, at: Position) => {
      await sleep(50);
      if (stopped) late.push(name);
      return setCheckpoint(name, at);
    };
    const runner = new ProjectionRunner(log, store, [tally('tally', 1, 150)], {});
    await runner.start();
    await base.append('a-1', [event('Something')], ANY); // chunk [a] 0-150 ms; its store timer fires at ~170, during [b]
    await sleep(15);
    await base.append('b-1', [event('Something')], ANY); // chunk [b] ~150-300 ms
    await sleep(205);
    await runner.stop(); // during chunk [b]
    stopped = true;
    await sleep(300);
    await base.close();
    expect(late).toEqual([]);
  });
});

describe('the projection runner retrying a failing event without transactions', () => {
  it('applies nothing twice: neither the events before the failing one nor the failing one to the projectors that had applied it', async () => {
    const log = new SqliteEventLog(':memory:');
    const store = new MemoryReadStore();
    let failures = 2;
    const flaky = failingOnPoison('flaky', () => failures-- > 0);
    // tally reads every event before flaky does (the order projectors are given in).
    const runner = new ProjectionRunner(log, store, [tally('tally', 1), flaky], { retryInitialMs: 20, retryMaxMs: 20 });
    await runner.start();
    try {
      const { position } = await log.append('b-1', [event('Something'), event('Something'), event('Poison')], ANY);
      await runner.waitFor(position);
      expect(await count(store, 'tally_v1')).toBe(3);
    } finally {
      await runner.stop();
      await log.close();
    }
  });
});

describe('the projection runner storing what a failing step applied (no transactions; the review of 75ec552)', () => {
  const failing = (fails: () => boolean) => failingOnPoison('flaky', fails);

  it('stores what the projectors before a failing first event applied, so the next start applies it to them no more', async () => {
    const log = new SqliteEventLog(':memory:');
    const store = new MemoryReadStore();
    const reports: string[] = [];
    const r1 = new ProjectionRunner(log, store, [tally('tally', 1), failing(() => true)], { retryInitialMs: 5_000, retryMaxMs: 5_000, report: (m) => reports.push(m) });
    await r1.start();
    const first = await log.append('b-1', [event('Something')], ANY);
    await r1.waitFor(first.position);
    await sleep(150); // its checkpoints stored by the timer
    const poison = await log.append('b-2', [event('Poison')], ANY); // a chunk of its own, failing at its first event
    for (let i = 0; i < 100 && !reports.some((m) => m.includes('retrying')); i++) await sleep(10);
    expect(await count(store, 'tally_v1')).toBe(2); // tally applied Poison; flaky failed on it
    await r1.stop();
    expect(await store.getCheckpoint('projector:tally@v1')).toEqual(poison.position);
    // The next start (another process, or a version lease's next holder) with flaky mended.
    const r2 = new ProjectionRunner(log, store, [tally('tally', 1), failing(() => false)]);
    await r2.start();
    try {
      await r2.waitFor(poison.position);
      expect(await count(store, 'tally_v1')).toBe(2);
    } finally {
      await r2.stop();
      await log.close();
    }
  });
});
