import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NatsServer, waitUntil } from '../support/nats.js';
import { type ProductOnNats, startProductOnNats } from '../support/nats-product.js';
import { http, type TurnoutProcess } from '../support/process.js';

/**
 * The product on NATS through an outage: nats-server stops and starts again on the same port and
 * store directory while constituents are created before, during and after. Delivery is at least
 * once: every webhook must arrive; a copy may arrive twice only where an attempt's ack was in
 * flight when the server went away, which this test counts and bounds.
 */
let product: ProductOnNats;
let nats: NatsServer;
let receiver: ProductOnNats['receiver'];
let turnout: TurnoutProcess;

beforeAll(async () => {
  product = await startProductOnNats('natsdown', { TURNOUT_RATE_LIMIT_PER_SECOND: '0', TURNOUT_RATE_LIMIT_PER_MINUTE: '0' });
  ({ nats, receiver, turnout } = product);
}, 180_000);

afterAll(async () => {
  await product?.stop();
});

describe('a process on NATS when the NATS server restarts', () => {
  it('delivers every webhook written before, during and after the outage, duplicates only as at-least-once allows', async () => {
    const admin = http(`${turnout.url}/admin/v1`, 'test-admin-token');
    const team = (await admin.post('/teams', { name: 'Outage' })).body.team.id;
    const key = (await admin.post(`/teams/${team}/api-keys`, { name: 'Integration', scope: 'read_write' })).body.key;
    const ep = await admin.post(`/teams/${team}/webhook-endpoints`, { url: receiver.url('/hook'), events: ['constituent.created'] });
    expect(ep.status, JSON.stringify(ep.body)).toBe(201);
    const client = http(`${turnout.url}/api/v1`, key);
    const created: number[] = [];
    const create = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const r = await client.post('/constituents', { FirstName: `Outage${created.length}`, LastName: 'Test' });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        created.push(r.body.constituent.PkConstituent);
      }
    };
    const delivered = () => new Set(receiver.on('/hook').map((r) => r.json?.data?.PkConstituent));

    await create(10);
    await waitUntil('the deliveries before the outage', () => created.every((id) => delivered().has(id)), 30_000);

    await nats.halt();
    await create(10); // the log is embedded: writes go on while the queue is away
    await new Promise((r) => setTimeout(r, 1_000)); // the server stays away a while, as in an outage
    await nats.resume();
    await create(10);
    await waitUntil('all thirty deliveries', () => created.every((id) => delivered().has(id)), 90_000).catch((err: Error) => {
      const missing = created.filter((id) => !delivered().has(id));
      throw new Error(`${err.message}; missing constituents ${missing.join(', ')}\n--- output ---\n${turnout.output().slice(-4000)}`);
    });

    const byEnvelope = new Map<string, number>();
    for (const r of receiver.on('/hook')) byEnvelope.set(r.json.id, (byEnvelope.get(r.json.id) ?? 0) + 1);
    const duplicates = [...byEnvelope.values()].reduce((n, c) => n + c - 1, 0);
    console.log(`NATS restart: ${byEnvelope.size} webhooks, ${duplicates} delivered twice (at-least-once)`);
    expect(byEnvelope.size).toBe(30);
    // Only an attempt whose ack the outage swallowed may be sent again: the ten created during it
    // were enqueued after it, and at most the concurrency's worth was in flight when it began.
    expect(duplicates).toBeLessThanOrEqual(10);
    expect(turnout.process.exitCode).toBeNull();
  }, 150_000);
});
