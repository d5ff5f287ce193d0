import { describe, expect, it } from 'vitest';
import type { Position, RecordedEvent } from '../../domain/shared/events.js';
import { ANY, type EventLog } from '../../eventlog/port.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { ProjectionRunner } from '../../projections/engine/main-thread.js';
import type { Projector } from '../../projections/engine/projector.js';
import type { ReadStore } from '../../projections/store/port.js';
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

describe('the projection runner stopping while an event keeps failing (the fresh review of the session\u2019s runner)', () => {
  it('applies no event handed over while a checkpoint store ran past the failing one, nor stores a checkpoint past it', async () => {
    // A log whose subscription the test drives: each delivery is the follower's handler, called when the test says.
    let deliver: ((e: RecordedEvent) => Promise<void> | void) | null = null;
    const log = {
      head: async () => null,
      subscribe: (_from: Position | null, handler: (e: RecordedEvent) => Promise<void> | void) => {
        deliver = handler;
        return { stop: async () => undefined };
      },
    } as unknown as EventLog;
    const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) });
    const recorded = (type: string, n: number) => ({ ...event(type), stream: `thing-${n}`, revision: 0n, position: at(n) }) as unknown as RecordedEvent;
    const base = new MemoryReadStore();
    let slow = false;
    // Checkpoint writes answer 50 ms late once `slow` is set (a MongoDB round trip under load).
    const store = new Proxy(base, {
      get(t, k, r) {
        const v = Reflect.get(t, k, r);
        if (typeof v !== 'function') return v;
        if (k !== 'moveCheckpoints' && k !== 'setCheckpoints') return v.bind(t);
        return async (...args: unknown[]) => {
          if (slow) await sleep(50);
          return v.apply(t, args);
        };
      },
    }) as ReadStore;
    const p: Projector = {
      ...failingOnPoison('p'),
      async apply(e: unknown) {
        if ((e as { type: string }).type === 'Slow') await sleep(40);
        if ((e as { type: string }).type === 'Poison') throw new Error('cannot apply');
      },
    };
    const failed: string[] = [];
    const runner = new ProjectionRunner(log, store, [p], { retryInitialMs: 20, retryMaxMs: 40, checkpointEveryMs: 20, onError: (_c, e) => failed.push(e.type) });
    await runner.start();
    await deliver!(recorded('Good', 1));
    await sleep(5); // applied; its store timer due in 20 ms
    slow = true;
    await deliver!(recorded('Slow', 2)); // a chunk of 40 ms: the store timer fires during it and queues behind it
    await sleep(10);
    await deliver!(recorded('Poison', 3)); // waits on the slow chunk; the queued store starts next
    await sleep(45); // the store (50 ms) runs; Poison's chunk waits on it
    const last = deliver!(recorded('Good', 4)); // waits on that store, then is queued behind Poison's chunk
    await sleep(200); // Poison failing, retried
    await runner.stop();
    await Promise.resolve(last).catch(() => undefined);
    expect(failed[0]).toBe('Poison');
    expect((await base.getCheckpoint('projector:p@v1'))?.commit).toBeLessThan(3n);
  });
});
