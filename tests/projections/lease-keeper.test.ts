import { afterEach, describe, expect, it } from 'vitest';
import { type Lease, LeaseKeeper } from '../../projections/lease.js';
import { until } from '../commands/eventlog.contract.js';

/** A lease nobody else wants: every acquire succeeds; releases are counted. */
function freeLease(ttlMs = 60_000): Lease & { releases: number } {
  return {
    ttlMs,
    releases: 0,
    async acquire() {
      return true;
    },
    async release() {
      this.releases++;
    },
  };
}

const keepers: LeaseKeeper[] = [];
afterEach(async () => {
  for (const k of keepers.splice(0)) await k.stop();
});

describe('keeping a lease while the work fails to start', () => {
  it('gives the lease back after a failed start, and runs the work once a later start succeeds', async () => {
    const lease = freeLease();
    const errors: unknown[] = [];
    let starts = 0;
    let running = false;
    const work = {
      async start() {
        if (++starts === 1) throw new Error('read store unreachable');
        running = true;
      },
      async stop() {
        running = false;
      },
    };
    // The lease's TTL is a minute: only the start's own backoff can bring the second try in time.
    const keeper = new LeaseKeeper(lease, work, { retryInitialMs: 5, retryMaxMs: 20, onError: (e) => void errors.push(e) });
    keepers.push(keeper);
    await keeper.start();
    expect(keeper.held).toBe(false);
    expect(lease.releases).toBe(1);
    await until('the work runs', () => keeper.held);
    expect(running).toBe(true);
    expect(starts).toBe(2);
    expect(errors).toEqual([new Error('read store unreachable')]);
  });
});
