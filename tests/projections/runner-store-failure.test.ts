import { describe, expect, it } from 'vitest';
import { ANY } from '../../eventlog/port.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { ProjectionRunner } from '../../projections/engine/main-thread.js';
import type { Position } from '../../domain/shared/events.js';
import { MemoryReadStore } from '../support/memory-store/memory.js';
import { count, event, sleep, tally, withoutCheckpoints } from '../support/runner-fixtures.js';

/** A store whose next checkpoint write fails once, 30 ms in (a MongoDB blip). */
function flakyStore() {
  const store = new MemoryReadStore();
  const state = { failOnce: false, failed: 0 };
  const setCheckpoint = store.setCheckpoint.bind(store);
  store.setCheckpoint = async (name: string, at: Position) => {
    if (state.failOnce) {
      state.failOnce = false;
      state.failed++;
      await sleep(30);
      throw new Error('transient store error');
    }
    return setCheckpoint(name, at);
  };
  return { store, state };
}

describe('a checkpoint store that fails, run one at a time with the chunks (the third review of the lease per version)', () => {
  it('still applies an event delivered while a chunk applies when the store behind it fails (a log without onCheckpoint, as EventStoreDB unfiltered)', async () => {
    const base = new SqliteEventLog(':memory:');
    const log = withoutCheckpoints(base);
    const { store, state } = flakyStore();
    const reports: string[] = [];
    const runner = new ProjectionRunner(log, store, [tally('tally', 1, 80)], { waitTimeoutMs: 1_500, report: (m) => reports.push(m) });
    await runner.start();
    state.failOnce = true; // the first store after start: chunk [a]'s timer, which fires during chunk [b]
    await base.append('a-1', [event('Something')], ANY); // chunk [a]: 0-80 ms
    await sleep(15);
    await base.append('b-1', [event('Something')], ANY); // handle(b) waits for [a]; chunk [b]: 80-160 ms
    await sleep(85);
    const c = await base.append('c-1', [event('Something')], ANY); // handle(c) waits for [b]
    let outcome = 'applied';
    await runner.waitFor(c.position).catch((err) => (outcome = `not applied: ${String(err)}`));
    const n = await count(store, 'tally_v1');
    await runner.stop();
    await base.close();
    expect({ outcome, n, failed: state.failed, reports }).toEqual({ outcome: 'applied', n: 3, failed: 1, reports: expect.anything() });
  });

  it('keeps the subscription when an event arrives while a failing store runs', async () => {
    const log = new SqliteEventLog(':memory:');
    const { store, state } = flakyStore();
    const reports: string[] = [];
    const runner = new ProjectionRunner(log, store, [tally('tally', 1, 80)], { waitTimeoutMs: 3_000, report: (m) => reports.push(m) });
    await runner.start();
    state.failOnce = true;
    await log.append('a-1', [event('Something')], ANY); // chunk [a] 0-80 ms, its store 100-130 ms (fails)
    await sleep(110);
    const b = await log.append('b-1', [event('Something')], ANY); // handle(b) awaits the failing store
    await runner.waitFor(b.position);
    const n = await count(store, 'tally_v1');
    await runner.stop();
    await log.close();
    expect({ n, failed: state.failed, resubscribed: reports.filter((r) => r.includes('resubscrib')) }).toEqual({ n: 2, failed: 1, resubscribed: [] });
  });
});
