import { describe, expect, it, vi } from 'vitest';
import { ANY, type EventLog } from '../../eventlog/port.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { summaryOf } from '../../projections/engine/builds.js';
import { ProjectionRunner } from '../../projections/engine/main-thread.js';
import { VersionOwnership, versionLeaseName } from '../../projections/engine/ownership.js';
import type { Projector } from '../../projections/engine/projector.js';
import type { ReadStore } from '../../projections/store/port.js';
import { MemoryReadStore } from '../support/memory-store/memory.js';
import { count, event, leaseStore, sleep, tally } from '../support/runner-fixtures.js';

describe('a version\u2019s writer hands over cleanly (the second review of the lease per version)', () => {
  it('applies a version no more once its lease is going, so the next writer applies each event once', async () => {
    const log = new SqliteEventLog(':memory:');
    const store = new MemoryReadStore();
    const leases = leaseStore(300);
    const name = versionLeaseName({ name: 'tally', version: 1 });
    let afterLapse = 0;
    const slow: Projector = {
      ...tally('tally', 1, 100),
      async apply(e: unknown, s: ReadStore) {
        await tally('tally', 1, 100).apply(e as never, s);
        if (leases.holder(name) !== 'blue') afterLapse++;
      },
    };
    const old = [slow, tally('people', 1)];
    const blue = new ProjectionRunner(log, store, old, { summary: summaryOf(old), ownership: new VersionOwnership(old, leases.contender('blue')) });
    await blue.start();
    const next = [tally('tally', 1), tally('people', 2)];
    const green = new ProjectionRunner(log, store, next, { summary: summaryOf(next), ownership: new VersionOwnership(next, leases.contender('green')) });
    await green.start();
    expect(leases.holder(name)).toBe('blue');
    for (let i = 0; i < 15; i++) await log.append(`thing-${i}`, [event('Something')], ANY);
    await sleep(150); // blue is one or two events into its chunk
    leases.partition('blue'); // its next renewal fails; the lease lapses 300 ms after the last one
    await vi.waitFor(() => expect(leases.holder(name)).toBe('green'), { timeout: 2_000 });
    await sleep(2_000);
    const n = await count(store, 'tally_v1');
    await blue.stop();
    await green.stop();
    await log.close();
    expect({ afterLapse, n }).toEqual({ afterLapse: 0, n: 15 });
  });

  it('never subscribes a follower stopped while it started (a lease taken during start()), so one subscription feeds the runner', async () => {
    const base = new SqliteEventLog(':memory:');
    let slowHead = false;
    const slowLog = new Proxy(base, {
      get(t, k, r) {
        if (k === 'head') return async () => {
          if (slowHead) await sleep(500);
          return t.head();
        };
        const v = Reflect.get(t, k, r);
        return typeof v === 'function' ? v.bind(t) : v;
      },
    }) as unknown as EventLog;
    const store = new MemoryReadStore();
    const leases = leaseStore(300);
    const old = [tally('tally', 1), tally('people', 1)];
    const blue = new ProjectionRunner(base, store, old, { summary: summaryOf(old), ownership: new VersionOwnership(old, leases.contender('blue')) });
    await blue.start();
    const next = [tally('tally', 1), tally('people', 2)];
    const green = new ProjectionRunner(slowLog, store, next, { summary: summaryOf(next), ownership: new VersionOwnership(next, leases.contender('green')) });
    slowHead = true;
    const started = green.start(); // green subscribes (head() takes 500 ms)
    await sleep(150);
    await blue.stop(); // blue's leases given up: green's keeper takes tally@1 while start() subscribes
    await started;
    await sleep(1_500);
    slowHead = false;
    for (let i = 0; i < 5; i++) await base.append(`thing-${i}`, [event('Something')], ANY);
    await sleep(1_000);
    const n = await count(store, 'tally_v1');
    await green.stop();
    await base.close();
    expect(n).toBe(5); // each event applied once
  });
});
