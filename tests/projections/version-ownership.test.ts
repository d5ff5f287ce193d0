import { describe, expect, it, vi } from 'vitest';
import { type EventLog } from '../../eventlog/port.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { summaryOf } from '../../projections/engine/builds.js';
import { ProjectionRunner } from '../../projections/engine/main-thread.js';
import { versionedCheckpointName } from '../../projections/engine/step.js';
import { MemoryReadStore } from '../support/memory-store/memory.js';
import { appender, count, leaseStore, sleep, tally } from '../support/runner-fixtures.js';
import { VersionOwnership, versionLeaseName } from '../../projections/engine/ownership.js';
import type { ReadStore } from '../../projections/store/port.js';


describe('a read-model version written by one process at a time, found by the review of the lease per version', () => {
  it('moves the new build\u2019s summary on when the shared version\u2019s writer stores its checkpoint after the new build\u2019s last step', async () => {
    const log = new SqliteEventLog(':memory:');
    const store = new MemoryReadStore();
    const leases = leaseStore(300);
    const append = appender(log);
    // blue's process is a little slower to apply the shared version (100 ms: a slow write)
    const old = [tally('tally', 1, 100), tally('people', 1)];
    const blue = new ProjectionRunner(log, store, old, { summary: summaryOf(old), ownership: new VersionOwnership(old, leases.contender('blue')) });
    await blue.start();
    const next = [tally('tally', 1), tally('people', 2)];
    const green = new ProjectionRunner(log, store, next, { summary: summaryOf(next), ownership: new VersionOwnership(next, leases.contender('green')) });
    await green.start();
    expect(leases.holder(versionLeaseName(next[0]))).toBe('blue');
    const last = await append(0, 1);
    await blue.waitFor(last);
    await green.waitFor(last);
    // The shared version's own checkpoint gets there after green's step has saved its summary.
    await vi.waitFor(async () => expect(await store.getCheckpoint(versionedCheckpointName(next[0]))).toEqual(last), { timeout: 2_000 });
    // Green's summary (what green's API processes wait on) follows it.
    await sleep(500);
    const summary = await store.getCheckpoint(summaryOf(next));
    await blue.stop();
    await green.stop();
    await log.close();
    expect(summary).toEqual(last);
  });

  it('stores what it applied of a version before its lease goes, and checkpoints what it applies again after taking one, so no event is applied twice', async () => {
    const log = new SqliteEventLog(':memory:');
    const store = new MemoryReadStore();
    const leases = leaseStore(300);
    const append = appender(log);
    const old = [tally('tally', 1), tally('people', 1)];
    // checkpoints stored per batch (the defaults are 256 events / 20 ms; a longer batch only widens it)
    const blue = new ProjectionRunner(log, store, old, { summary: summaryOf(old), checkpointEvery: 1_000, checkpointEveryMs: 60_000, ownership: new VersionOwnership(old, leases.contender('blue')) });
    await blue.start();
    const first = await append(0, 5);
    await blue.waitFor(first);
    const next = [tally('tally', 1), tally('people', 2)];
    const green = new ProjectionRunner(log, store, next, { summary: summaryOf(next), ownership: new VersionOwnership(next, leases.contender('green')) });
    await green.start();
    expect(leases.holder(versionLeaseName(next[0]))).toBe('blue');
    // blue's renewals stop getting through: its keeper gives the lease up, green takes it
    leases.cut('blue');
    await vi.waitFor(() => expect(leases.holder(versionLeaseName(next[0]))).toBe('green'), { timeout: 2_000 });
    await sleep(500);
    const n = await count(store, 'tally_v1');
    // Green applied nothing again, and checkpoints what it applies from its takeover on.
    await vi.waitFor(async () => expect(await store.getCheckpoint(versionedCheckpointName(next[0]))).toEqual(first), { timeout: 2_000 });
    await blue.stop();
    // green stops gracefully: what it applied to tally@1 should be stored before its lease goes
    await green.stop();
    const cpStopped = await store.getCheckpoint(versionedCheckpointName(next[0]));
    await log.close();
    expect({ n, cpStopped }).toEqual({ n: 5, cpStopped: first });
  });

  it('tries the resubscription after a lease taken again until it subscribes, instead of projecting nothing while holding the leases', async () => {
    const log = new SqliteEventLog(':memory:');
    const store = new MemoryReadStore();
    const leases = leaseStore(300);
    const append = appender(log);
    const fail = { armed: false };
    // green's view of the log: head() fails once when armed (a transient error of the log)
    const greenLog = new Proxy(log, {
      get(t, k) {
        if (k === 'head' && fail.armed)
          return async () => {
            fail.armed = false;
            throw new Error('log briefly unavailable');
          };
        const v = Reflect.get(t, k, t);
        return typeof v === 'function' ? v.bind(t) : v;
      },
    }) as unknown as EventLog;
    const reports: string[] = [];
    const old = [tally('tally', 1), tally('people', 1)];
    const blue = new ProjectionRunner(log, store, old, { summary: summaryOf(old), ownership: new VersionOwnership(old, leases.contender('blue')) });
    await blue.start();
    const next = [tally('tally', 1), tally('people', 2)];
    const green = new ProjectionRunner(greenLog, store, next, { summary: summaryOf(next), report: (m) => reports.push(m), ownership: new VersionOwnership(next, leases.contender('green')) });
    await green.start();
    const first = await append(0, 5);
    await blue.waitFor(first);
    await green.waitFor(first);
    fail.armed = true;
    await blue.stop();
    await vi.waitFor(() => expect(leases.holder(versionLeaseName(next[0]))).toBe('green'), { timeout: 2_000 });
    await sleep(300);
    const after = await append(5, 10);
    let people = 0;
    try {
      await vi.waitFor(async () => expect(await count(store, 'people_v2')).toBe(10), { timeout: 2_000 });
    } catch {
      // Asserted below, after the runners are stopped.
    }
    people = await count(store, 'people_v2');
    expect(await store.getCheckpoint(versionedCheckpointName(next[1]))).toEqual(after);
    expect(reports.some((r) => /resubscribing after a lease taken failed/.test(r))).toBe(true);
    await green.stop();
    await log.close();
    expect(people).toBe(10);
  });
  it('marks stored only what a checkpoint store wrote, not a position a chunk reached while it waited on the store', async () => {
    const log = new SqliteEventLog(':memory:');
    const mem = new MemoryReadStore();
    const leases = leaseStore(60_000);
    const append = appender(log);
    const projectors = [tally('tally', 1), tally('other', 1)];
    // another build's process writes other@1
    expect(await leases.contender('x')(versionLeaseName(projectors[1])).acquire()).toBe(true);
    const hook = { armed: false, during: async () => {} };
    const store = new Proxy(mem, {
      get(t, k) {
        if (k === 'getCheckpoint')
          return async (name: string) => {
            if (name === versionedCheckpointName(projectors[1]) && hook.armed) {
              hook.armed = false;
              await hook.during();
            }
            return t.getCheckpoint(name);
          };
        const v = Reflect.get(t, k, t);
        return typeof v === 'function' ? v.bind(t) : v;
      },
    }) as unknown as ReadStore;
    const blue = new ProjectionRunner(log, store, projectors, { summary: summaryOf(projectors), ownership: new VersionOwnership(projectors, leases.contender('blue')) });
    await blue.start();
    let third = null as Awaited<ReturnType<typeof append>> | null;
    // while the timer's save reads other@1's checkpoint (a round trip on MongoDB), two more events apply
    // (The runner stores checkpoints one at a time with its chunks, so these apply after that save.)
    hook.during = async () => {
      third = await append(1, 3);
    };
    hook.armed = true;
    const first = await append(0, 1);
    await blue.waitFor(first);
    await vi.waitFor(() => expect(third).not.toBeNull(), { timeout: 2_000 });
    await sleep(200);
    await blue.stop();
    const cp = await mem.getCheckpoint(versionedCheckpointName(projectors[0]));
    await log.close();
    expect(cp).toEqual(third);
  });
});
