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

/** One lease, shared by contenders, honouring its TTL by this process's clock as a lease store would. */
function sharedLease(ttlMs: number) {
  const state = { holder: null as string | null, expiresAt: 0 };
  const contender = (me: string): Lease => ({
    ttlMs,
    async acquire() {
      const now = Date.now();
      if (state.holder !== null && state.holder !== me && state.expiresAt > now) return false;
      Object.assign(state, { holder: me, expiresAt: now + ttlMs });
      return true;
    },
    async release() {
      if (state.holder === me) Object.assign(state, { holder: null, expiresAt: 0 });
    },
  });
  return { contender, holds: (me: string) => state.holder === me && state.expiresAt > Date.now() };
}

describe('keeping a lease while the work takes longer than the TTL to start', () => {
  it('renews it during the start, so a second keeper never runs the work at the same time', async () => {
    const lease = sharedLease(300);
    const active = new Set<string>();
    const overlaps: string[] = [];
    const lapses: string[] = [];
    const work = (me: string) => ({
      async start() {
        active.add(me);
        if (active.size > 1) overlaps.push([...active].join(' and '));
        await new Promise((r) => setTimeout(r, 600));
        if (!lease.holds(me)) lapses.push(`${me} started without the lease`);
      },
      async stop() {
        active.delete(me);
      },
    });
    const a = new LeaseKeeper(lease.contender('a'), work('a'));
    const b = new LeaseKeeper(lease.contender('b'), work('b'));
    keepers.push(a, b);
    await a.start();
    expect(a.held).toBe(true);
    await b.start();
    // Well past the TTL, with a renewal due every 100 ms: b never takes over while a holds it.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(overlaps).toEqual([]);
    expect(lapses).toEqual([]);
    expect([a.held, b.held]).toEqual([true, false]);
    // And the lease passes once a stops.
    await a.stop();
    await until('b to run the work', () => b.held);
    expect(overlaps).toEqual([]);
  });

  it('stops a start that ends after the lease was lost, before marking the work running', async () => {
    let grant = true;
    const lease: Lease = { ttlMs: 300, acquire: async () => grant, release: async () => undefined };
    let running = false;
    let stops = 0;
    const keeper = new LeaseKeeper(lease, {
      async start() {
        running = true;
        grant = false; // lost while starting: the next renewal is refused
        await new Promise((r) => setTimeout(r, 400));
      },
      async stop() {
        running = false;
        stops++;
      },
    });
    keepers.push(keeper);
    await keeper.start();
    expect(keeper.held).toBe(false);
    expect(running).toBe(false);
    expect(stops).toBe(1);
  });
});
