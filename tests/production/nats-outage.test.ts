import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readiness } from '../../api/routes/health.js';
import { type NatsServer, waitUntil } from '../support/nats.js';
import { type ProductOnNats, startProductOnNats } from '../support/nats-product.js';
import { http, type TurnoutProcess } from '../support/process.js';

/**
 * The product on NATS with the default rate limits on (the shared limiter in NATS KV) while
 * nats-server is stopped, as an operator would see it (issue 30): writes go on answering at once,
 * /readyz says degraded, and once NATS is back every webhook arrives. nats-restart.test.ts plays
 * an outage with the limits off.
 */
let product: ProductOnNats;
let nats: NatsServer;
let receiver: ProductOnNats['receiver'];
let turnout: TurnoutProcess;

beforeAll(async () => {
  product = await startProductOnNats('natsout', {});
  ({ nats, receiver, turnout } = product);
}, 180_000);

afterAll(async () => {
  await product?.stop();
});

const follower = (body: { followers: Array<{ name: string; state: string }> }, name: string) => body.followers.find((f) => f.name === name)?.state;

describe('a process on NATS with the rate limits on, when nats-server stops', () => {
  let client: ReturnType<typeof http>;
  const created: number[] = [];
  const delivered = () => new Set(receiver.on('/hook').map((r) => r.json?.data?.PkConstituent));
  const missing = () => created.filter((id) => !delivered().has(id));
  const create = async (name: string) => {
    const started = performance.now();
    const r = await client.post('/constituents', { FirstName: name, LastName: 'Outage' });
    const ms = performance.now() - started;
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    created.push(r.body.constituent.PkConstituent);
    return ms;
  };
  const readyz = () => http(turnout.url).get('/readyz');

  beforeAll(async () => {
    const admin = http(`${turnout.url}/admin/v1`, 'test-admin-token');
    const team = (await admin.post('/teams', { name: 'Outage' })).body.team.id;
    const key = (await admin.post(`/teams/${team}/api-keys`, { name: 'Integration', scope: 'read_write' })).body.key;
    expect((await admin.post(`/teams/${team}/webhook-endpoints`, { url: receiver.url('/hook'), events: ['constituent.created'] })).status).toBe(201);
    client = http(`${turnout.url}/api/v1`, key);
    await create('Before');
    await waitUntil('the first delivery', () => missing().length === 0, 30_000);
  }, 60_000);

  it('resumes deliveries after an outage with no writes during it: every webhook within 10 s of the writes', async () => {
    await nats.halt();
    await waitUntil('/readyz to say the dispatcher is reconnecting', async () => follower((await readyz()).body, 'webhook-dispatcher') === 'reconnecting', 20_000);
    // Long enough for the dispatcher's lease to lapse on the server too (its TTL is 15 s), as in
    // the 20 s outage of the issue.
    await new Promise((r) => setTimeout(r, 16_000));
    await nats.resume();
    for (let i = 0; i < 9; i++) await create(`After${i}`);
    const wrote = Date.now();
    await waitUntil('the nine deliveries', () => missing().length === 0, 30_000).catch((err: Error) => {
      throw new Error(`${err.message}; missing ${missing().join(', ')}\n--- output ---\n${turnout.output().slice(-3000)}`);
    });
    expect(Date.now() - wrote).toBeLessThan(10_000);
    await waitUntil('/readyz to say ready again', async () => (await readyz()).body.status === 'ready', 20_000);
  }, 90_000);

  it('answers writes within 1 s during the outage, says degraded meanwhile, and delivers them once NATS is back', async () => {
    const fallbacksBefore = turnout.output().match(/shared store is unreachable/g)?.length ?? 0;
    await nats.halt();
    const took: number[] = [];
    for (let i = 0; i < 10; i++) took.push(await create(`During${i}`));
    expect(Math.max(...took), took.map((t) => t.toFixed(0)).join(', ')).toBeLessThan(1_000);
    const r = await readyz();
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('degraded');
    expect(follower(r.body, 'rate-limits')).toBe('reconnecting');
    expect(follower(r.body, 'webhook-dispatcher')).toBe('reconnecting');
    expect(follower(r.body, 'read-models')).toBe('caught_up');
    // Logged once for the outage, not once per request.
    expect(turnout.output().match(/shared store is unreachable/g)?.length).toBe(fallbacksBefore + 1);

    await nats.resume();
    await waitUntil('every webhook', () => missing().length === 0, 60_000).catch((err: Error) => {
      throw new Error(`${err.message}; missing ${missing().join(', ')}\n--- output ---\n${turnout.output().slice(-3000)}`);
    });
    await waitUntil('/readyz to say ready again', async () => (await readyz()).body.status === 'ready', 20_000);
    expect(turnout.output()).toMatch(/limits are shared again/);
    expect(turnout.process.exitCode).toBeNull();
  }, 120_000);
});

describe('readiness', () => {
  const services = (reachable: boolean, followers: Array<{ name: string; state: 'caught_up' | 'catching_up' | 'reconnecting' | 'failed' }>) => ({
    reachable: async () => {
      if (!reachable) throw new Error('unreachable');
    },
    followers: async () => followers.map((f) => ({ ...f, behind: null })),
    starting: () => false,
  });

  it('is degraded, not down, while only the delivery queue or the shared limits are away', async () => {
    const degraded = await readiness(services(true, [{ name: 'read-models', state: 'caught_up' }, { name: 'webhook-dispatcher', state: 'reconnecting' }, { name: 'rate-limits', state: 'reconnecting' }]));
    expect(degraded.code).toBe(200);
    expect(degraded.body.status).toBe('degraded');
  });

  it('is not ready while a read model or a store is away, whatever the rest', async () => {
    for (const s of [
      services(true, [{ name: 'read-models', state: 'reconnecting' }, { name: 'rate-limits', state: 'reconnecting' }]),
      services(true, [{ name: 'read-models', state: 'failed' }]),
      services(false, [{ name: 'read-models', state: 'caught_up' }, { name: 'webhook-dispatcher', state: 'reconnecting' }]),
      services(true, [{ name: 'read-models', state: 'caught_up' }, { name: 'webhook-dispatcher', state: 'catching_up' }]),
    ]) {
      const r = await readiness(s);
      expect(r).toMatchObject({ code: 503, body: { status: 'not_ready' } });
    }
  });
});
