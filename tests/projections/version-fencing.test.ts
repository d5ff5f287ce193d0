import { describe, expect, it, vi } from 'vitest';
import { ANY } from '../../eventlog/port.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { summaryOf } from '../../projections/engine/builds.js';
import { ProjectionRunner } from '../../projections/engine/main-thread.js';
import { VersionOwnership, versionLeaseName } from '../../projections/engine/ownership.js';
import type { Projector } from '../../projections/engine/projector.js';
import { versionedCheckpointName } from '../../projections/engine/step.js';
import type { Lease } from '../../projections/lease.js';
import type { ReadStore } from '../../projections/store/port.js';
import { MemoryReadStore } from '../support/memory-store/memory.js';
import { count, event, leaseStore, sleep, tally } from '../support/runner-fixtures.js';

/**
 * The two edges the third review of the lease per version left open: a version whose lease goes
 * while a long chunk applies, and a writer's checkpoint that lands after its successor's.
 */
describe('a version\u2019s lease passing while its writer is slow', () => {
  const shared = tally('tally', 1);
  const tallyLease = versionLeaseName(shared);

  /** `me`'s leases, its renewals of the shared version's failing once `lost.value` is set (that lease alone lapses at its TTL). */
  const losing = (leases: ReturnType<typeof leaseStore>, me: string, lost: { value: boolean }) => (name: string): Lease => {
    const lease = leases.contender(me)(name);
    return { ...lease, acquire: async () => (name === tallyLease && lost.value ? false : lease.acquire()) };
  };

  it('ends the chunk where the version stops being its own and stores what it applied of it, however long the rest of the chunk takes', async () => {
    const log = new SqliteEventLog(':memory:');
    const store = new MemoryReadStore();
    const leases = leaseStore(300);
    const lost = { value: false };
    // Blue's own version is slow (60 ms an event): a chunk of 14 takes 840 ms, far past a third of the TTL.
    const blueSet = [tally('tally', 1), tally('people', 1, 60)];
    const blue = new ProjectionRunner(log, store, blueSet, { summary: summaryOf(blueSet), ownership: new VersionOwnership(blueSet, losing(leases, 'blue', lost)) });
    await blue.start();
    const greenSet = [tally('tally', 1), tally('people', 2)];
    const green = new ProjectionRunner(log, store, greenSet, { summary: summaryOf(greenSet), ownership: new VersionOwnership(greenSet, leases.contender('green')) });
    await green.start();
    expect(leases.holder(tallyLease)).toBe('blue');
    try {
      await log.append('thing-0', [event('Something')], ANY);
      await sleep(100); // blue's first chunk: the one event
      for (let i = 1; i < 15; i++) await log.append(`thing-${i}`, [event('Something')], ANY);
      await sleep(150); // blue two or three events into its chunk of 14
      lost.value = true;
      await vi.waitFor(() => expect(leases.holder(tallyLease)).toBe('green'), { timeout: 3_000 });
      await vi.waitFor(async () => expect(await count(store, 'people_v2')).toBe(15), { timeout: 3_000 });
      await vi.waitFor(async () => expect(await count(store, 'people_v1')).toBe(15), { timeout: 3_000 });
      await sleep(300);
      // Each event applied once to the shared version: blue's part stored at its cut, green's from there.
      expect(await count(store, 'tally_v1')).toBe(15);
    } finally {
      await blue.stop();
      await green.stop();
      await log.close();
    }
  });

  it('never moves a checkpoint back: the late write of a writer whose lease passed is refused, not stored over its successor\u2019s', async () => {
    const log = new SqliteEventLog(':memory:');
    const store = new MemoryReadStore();
    const leases = leaseStore(300);
    const lost = { value: false };
    // Blue's checkpoint writes reach the store late once `slow` is set (a store that stalls, then answers).
    let slow = false;
    const late: Array<Promise<unknown>> = [];
    const blueStore = new Proxy(store, {
      get(t, k, r) {
        const v = Reflect.get(t, k, r);
        if (typeof v !== 'function') return v;
        if (k !== 'moveCheckpoints' && k !== 'setCheckpoints' && k !== 'setCheckpoint') return v.bind(t);
        return async (...args: unknown[]) => {
          if (slow) {
            const landing = sleep(900).then(() => v.apply(t, args));
            late.push(landing.catch(() => undefined));
            return landing;
          }
          return v.apply(t, args);
        };
      },
    }) as ReadStore;
    const reports: string[] = [];
    const blueSet = [tally('tally', 1), tally('people', 1)];
    const blue = new ProjectionRunner(log, blueStore, blueSet, {
      summary: summaryOf(blueSet),
      ownership: new VersionOwnership(blueSet, losing(leases, 'blue', lost)),
      report: (m) => reports.push(m),
    });
    await blue.start();
    const greenSet = [tally('tally', 1), tally('people', 2)];
    const green = new ProjectionRunner(log, store, greenSet, { summary: summaryOf(greenSet), ownership: new VersionOwnership(greenSet, leases.contender('green')) });
    await green.start();
    const checkpoint = () => store.getCheckpoint(versionedCheckpointName(shared as Projector));
    try {
      for (let i = 0; i < 5; i++) await log.append(`thing-${i}`, [event('Something')], ANY);
      await vi.waitFor(async () => expect(await count(store, 'tally_v1')).toBe(5));
      slow = true;
      lost.value = true;
      const fifth = (await log.append('thing-5', [event('Something')], ANY)).position; // blue applies it; its checkpoint lands late
      await vi.waitFor(() => expect(leases.holder(tallyLease)).toBe('green'), { timeout: 3_000 });
      let last = fifth;
      for (let i = 6; i < 10; i++) last = (await log.append(`thing-${i}`, [event('Something')], ANY)).position;
      await vi.waitFor(async () => expect(await checkpoint()).toEqual(last), { timeout: 3_000 });
      await Promise.all(late);
      await sleep(100);
      // Blue's write of thing-5's position was refused: the checkpoint stays at green's.
      expect(await checkpoint()).toEqual(last);
      expect(reports.some((m) => /checkpoint projector:tally@v1 was moved by another writer/.test(m))).toBe(true);
    } finally {
      slow = false;
      await blue.stop();
      await green.stop();
      await log.close();
    }
  });
});
