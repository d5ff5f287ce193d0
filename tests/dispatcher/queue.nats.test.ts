import { AckPolicy, DeliverPolicy, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { natsConnectOptions } from '../../dispatcher/queue/nats-connect.js';
import { NatsDeliveryQueue } from '../../dispatcher/queue/nats.js';
import { tierFor } from '../../dispatcher/queue/nats-delay.js';
import type { DeliveryTask, Outcome } from '../../dispatcher/queue/port.js';
import { openNats } from '../../runtime/scale.js';
import { testConfig } from '../../runtime/config.js';
import { type NatsServer, startNats } from '../support/nats.js';
import { natsAvailable } from './nats-server.js';
import { until } from './support.js';

const task = (id: string, endpointId: number): DeliveryTask => ({ id, endpointId, team: 1, eventId: `evt_${id}`, eventType: 'constituent.created', body: '{}' });
const pos = (n: number) => ({ commit: BigInt(n), prepare: BigInt(n) });

describe('credentials in TURNOUT_NATS_URL', () => {
  it('are taken out of the URL and passed as user and password, or as a token', () => {
    expect(natsConnectOptions('nats://turnout:s%40cret@nats:4222')).toEqual({ servers: ['nats://nats:4222'], user: 'turnout', pass: 's@cret' });
    expect(natsConnectOptions('nats://t0ken@nats:4222')).toEqual({ servers: ['nats://nats:4222'], token: 't0ken' });
    expect(natsConnectOptions('tls://a:1@one:4222,tls://a:1@two:4222')).toEqual({ servers: ['tls://one:4222', 'tls://two:4222'], user: 'a', pass: '1' });
    expect(natsConnectOptions('nats://127.0.0.1:4222')).toEqual({ servers: ['nats://127.0.0.1:4222'] });
  });
});

describe('choosing a delay tier', () => {
  it('waits in the largest tier that fits, and is due within an eighth of a second', () => {
    expect(tierFor(100)).toBeNull();
    expect(tierFor(200)).toBe(250);
    expect(tierFor(30_000)).toBe(16_000);
    expect(tierFor(3_600_000)).toBe(2_048_000);
    expect(tierFor(10 * 3_600_000)).toBe(4_096_000);
  });
});

describe.skipIf(!natsAvailable)('the NATS queue against a real server', () => {
  let server: NatsServer;
  let secured: NatsServer;
  beforeAll(async () => {
    [server, secured] = await Promise.all([startNats(), startNats({ config: 'authorization { user: turnout, password: "s3cret" }\n' })]);
  });
  afterAll(async () => {
    await Promise.all([server?.stop(), secured?.stop()]);
  });

  it('keeps delivering to a healthy endpoint while a dead one has many retries waiting', async () => {
    // The work consumer as a deployment may have it: few unacked messages allowed. A retry held as
    // a delayed NAK counts against that limit, so the dead endpoint's retries used to stall everything.
    const prefix = 'STALL_TEST';
    const nc = await connect({ servers: server.url });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: prefix, subjects: ['stall_test.tasks'], retention: RetentionPolicy.Workqueue, storage: StorageType.File });
    await jsm.consumers.add(prefix, {
      durable_name: 'stall_test_workers',
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      max_deliver: -1,
      ack_wait: 30_000_000_000,
      max_ack_pending: 4,
    });
    const q = await NatsDeliveryQueue.open(nc, { prefix, maxAckPending: 4 });
    const dead = Array.from({ length: 20 }, (_, i) => task(`dead-${i}`, 1));
    await q.enqueue(dead, pos(1));
    const tried = new Set<string>();
    const healthy: number[] = [];
    const c = q.consume(async (l): Promise<Outcome> => {
      if (l.task.endpointId === 1) {
        tried.add(l.task.id);
        return { kind: 'retry', delayMs: 60_000 };
      }
      healthy.push(Date.now());
      return { kind: 'done' };
    }, { concurrency: 8 });
    await until(() => tried.size === 20, 10_000, 'every dead task tried once');
    const sent = Date.now();
    await q.enqueue(Array.from({ length: 5 }, (_, i) => task(`ok-${i}`, 2)), pos(2));
    await until(() => healthy.length === 5, 30_000, 'the healthy deliveries');
    // Well before the dead tasks' retries come due (60 s), however busy the machine.
    expect(Math.max(...healthy) - sent).toBeLessThan(30_000);
    await c.stop();
    await q.close();
    await nc.close();
  }, 90_000);

  it("keeps each team's last erasure position, only ever moving it forward, for workers of any process (decisions.md §17)", async () => {
    const [a, b] = await Promise.all([NatsDeliveryQueue.connect(server.url, { prefix: 'ERASURE_TEST' }), NatsDeliveryQueue.connect(server.url, { prefix: 'ERASURE_TEST' })]);
    expect(await a.erasedThrough(1)).toBeNull();
    await a.noteErasure(1, 50n);
    await a.noteErasure(1, 40n);
    expect(await b.erasedThrough(1)).toBe(50n);
    // Two processes' erasures of one team at once: the highest stands.
    await Promise.all([a.noteErasure(1, 70n), b.noteErasure(1, 60n), a.noteErasure(1, 65n)]);
    expect(await b.erasedThrough(1)).toBe(70n);
    expect(await b.erasedThrough(2)).toBeNull();
    await Promise.all([a.close(), b.close()]);
  }, 30_000);

  it('connects with the user and password given in the URL, for the queue and for the process connection', async () => {
    const url = `nats://turnout:s3cret@127.0.0.1:${secured.port}`;
    const q = await NatsDeliveryQueue.connect(url, { prefix: 'AUTH_TEST' });
    await q.enqueue([task('a1', 1)], pos(3));
    expect(await q.checkpoint()).toEqual(pos(3));
    await q.close();
    const nc = await openNats(testConfig({ natsUrl: url }));
    expect(nc!.info?.server_id).toBeTruthy();
    await nc!.close();
    // And the server does refuse a connection without them: the test above proves the credentials arrived.
    await expect(connect({ servers: `127.0.0.1:${secured.port}`, maxReconnectAttempts: 0, reconnect: false })).rejects.toThrow(/Authorization/i);
  }, 30_000);
});
