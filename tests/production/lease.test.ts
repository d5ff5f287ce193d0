import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Lease, LeaseKeeper } from '../../projections/lease.js';
import { MongoLease } from '../../projections/lease-mongo.js';
import { NatsLease } from '../../projections/lease-nats.js';
import { scriptedLeaseCollection } from '../support/mongo-lease-collection.js';
import { startMongo } from '../support/containers.js';
import { startNats, type NatsServer, waitUntil } from '../support/nats.js';

/** The lease contract, run against every lease store: open(name, ttlMs) gives one contender. */
function leaseContract(label: string, setup: () => Promise<{ open: (name: string, ttlMs: number) => Promise<Lease>; teardown: () => Promise<void> }>) {
  describe(`${label} lease`, () => {
    let open: (name: string, ttlMs: number) => Promise<Lease>;
    let teardown: () => Promise<void>;
    let n = 0;
    beforeAll(async () => ({ open, teardown } = await setup()));
    afterAll(async () => teardown?.());

    it('is held by one contender at a time and renewed by its holder', async () => {
      const name = `projector-${++n}`;
      const [a, b] = [await open(name, 10_000), await open(name, 10_000)];
      expect(await a.acquire()).toBe(true);
      expect(await b.acquire()).toBe(false);
      expect(await a.acquire()).toBe(true);
      expect(await b.acquire()).toBe(false);
    });

    it('lets exactly one of several racing contenders take a free lease', async () => {
      const name = `projector-${++n}`;
      const all = await Promise.all(Array.from({ length: 6 }, () => open(name, 10_000)));
      const won = await Promise.all(all.map((l) => l.acquire()));
      expect(won.filter(Boolean)).toHaveLength(1);
    });

    it('passes to a standby once the holder releases it', async () => {
      const name = `projector-${++n}`;
      const [a, b] = [await open(name, 10_000), await open(name, 10_000)];
      expect(await a.acquire()).toBe(true);
      await a.release();
      expect(await b.acquire()).toBe(true);
      expect(await a.acquire()).toBe(false);
    });

    it('lapses when the holder stops renewing', async () => {
      const name = `projector-${++n}`;
      const [a, b] = [await open(name, 1_000), await open(name, 1_000)];
      expect(await a.acquire()).toBe(true);
      expect(await b.acquire()).toBe(false);
      await waitUntil('the lease to lapse', () => b.acquire(), 10_000);
      expect(await a.acquire()).toBe(false);
    });

    it('is taken back at the first try by a holder whose lease lapsed with nobody else taking it', async () => {
      const name = `projector-${++n}`;
      const a = await open(name, 1_000);
      expect(await a.acquire()).toBe(true);
      // Renewals missed (the store away for longer than the TTL): the store drops the lease.
      await new Promise((r) => setTimeout(r, 2_500));
      expect(await a.acquire()).toBe(true);
    });
  });
}

let nats: NatsServer;
const conns: NatsConnection[] = [];
leaseContract('NATS KV', async () => {
  nats = await startNats();
  return {
    open: async (name, ttlMs) => {
      const nc = await connect({ servers: nats.url });
      conns.push(nc);
      return NatsLease.open(nc, name, ttlMs);
    },
    teardown: async () => {
      for (const c of conns.splice(0)) await c.close();
      await nats.stop();
    },
  };
});

// MongoDB's own rules for the lease's calls, on any machine: refusing `$expr` in an upsert's query
// (error 224) and a duplicate `_id` (11000); see the scripted collection for the documentation.
leaseContract('MongoDB (a scripted collection with the server\'s upsert rules)', async () => {
  const collection = scriptedLeaseCollection();
  return { open: async (name, ttlMs) => new MongoLease(collection, name, ttlMs), teardown: async () => {} };
});

// On TURNOUT_TEST_MONGO_URL (a throwaway database) when set, else on a MongoDB container where Docker runs.
const mongo = process.env.TURNOUT_TEST_MONGO_URL ? null : await startMongo('the lease contract');
const mongoUrl = process.env.TURNOUT_TEST_MONGO_URL ?? mongo?.url;
afterAll(async () => mongo?.stop());
const run = Date.now();
describe.skipIf(!mongoUrl)('on MongoDB', () =>
  leaseContract('MongoDB', async () => {
    const opened: MongoLease[] = [];
    return {
      open: async (name, ttlMs) => {
        const l = await MongoLease.connect(mongoUrl!, `${run}-${name}`, ttlMs);
        opened.push(l);
        return l;
      },
      teardown: async () => {
        for (const l of opened) await l.close();
      },
    };
  }),
);

describe('keeping a lease', () => {
  let server: NatsServer;
  beforeAll(async () => (server = await startNats()));
  afterAll(async () => server?.stop());

  it('runs the work in exactly one keeper and hands it over when that keeper stops', async () => {
    const running = new Set<number>();
    const keepers: LeaseKeeper[] = [];
    for (let i = 0; i < 3; i++) {
      const nc = await connect({ servers: server.url });
      conns.push(nc);
      const lease = await NatsLease.open(nc, 'read-models', 1_500);
      keepers.push(new LeaseKeeper(lease, { start: async () => void running.add(i), stop: async () => void running.delete(i) }));
    }
    await Promise.all(keepers.map((k) => k.start()));
    expect(running.size).toBe(1);
    const first = [...running][0];
    expect(keepers.filter((k) => k.held)).toEqual([keepers[first]]);
    await keepers[first].stop();
    expect(running.size).toBe(0);
    await waitUntil('a standby to take over', () => running.size === 1, 10_000);
    expect(running.has(first)).toBe(false);
    for (const k of keepers) await k.stop();
    expect(running.size).toBe(0);
  });
});
