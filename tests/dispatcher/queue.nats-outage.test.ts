import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsDeliveryQueue } from '../../dispatcher/queue/nats.js';
import type { DeliveryTask } from '../../dispatcher/queue/port.js';
import { type NatsServer, startNats, waitUntil } from '../support/nats.js';
import { NATS_BIN, natsAvailable } from './nats-server.js';

const task = (id: string): DeliveryTask => ({ id, endpointId: 1, team: 1, eventId: `evt_${id}`, eventType: 'constituent.created', body: '{}' });

/**
 * A nats-server accepts connections before its JetStream is ready (it recovers its streams
 * first). nats.js's consumer, reconnected to such a server, fails to check its consumer and waits
 * 15 to 45 s before pulling again, and a second reconnect meanwhile does not cut that wait short
 * (issue 30: webhooks written after an outage were not delivered within 30 s). Played here by a
 * server without JetStream on the same port for a moment, then the real one again.
 */
describe.skipIf(!natsAvailable)('the NATS queue after an outage', () => {
  let server: NatsServer;
  beforeAll(async () => {
    server = await startNats();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('delivers tasks added after the server is back within seconds, though JetStream was not ready at the first reconnect', async () => {
    const q = await NatsDeliveryQueue.connect(server.url, { prefix: 'OUTAGE_TEST', onError: () => undefined });
    const handled = new Map<string, number>();
    const c = q.consume(async (l) => {
      handled.set(l.task.id, Date.now());
      return { kind: 'done' };
    }, { concurrency: 4 });
    try {
      await q.add([task('before')]);
      await waitUntil('the task before the outage', () => handled.has('before'), 10_000);

      await server.halt();
      await waitUntil('the queue to see the outage', () => !q.reachable(), 10_000);
      // A server without JetStream takes the port: the client reconnects and its consumer's checks fail.
      const bare = spawn(NATS_BIN, ['-a', '127.0.0.1', '-p', String(server.port)], { stdio: 'ignore' });
      try {
        await waitUntil('the queue to reconnect to the bare server', () => q.reachable(), 15_000);
        await new Promise((r) => setTimeout(r, 500)); // its check of the consumer fails meanwhile
      } finally {
        bare.kill('SIGTERM');
        await new Promise((r) => bare.once('exit', r));
      }
      await server.resume();
      await waitUntil('the queue to reconnect', () => q.reachable(), 15_000);
      await waitUntil('the task to be published', () => q.add([task('after')]).then(() => true), 10_000);
      const added = Date.now();
      await waitUntil('the task after the outage', () => handled.has('after'), 12_000);
      expect(handled.get('after')! - added).toBeLessThan(10_000);
    } finally {
      await c.stop();
      await q.close();
    }
  }, 60_000);
});

describe.skipIf(!natsAvailable)('the NATS queue with two dispatchers', () => {
  let server: NatsServer;
  beforeAll(async () => {
    server = await startNats();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('refuses a checkpoint from a dispatcher that another has overtaken, so it never moves back', async () => {
    const pos = (n: number) => ({ commit: BigInt(n), prepare: BigInt(n) });
    const [a, b] = [await NatsDeliveryQueue.connect(server.url, { prefix: 'TWO_TEST' }), await NatsDeliveryQueue.connect(server.url, { prefix: 'TWO_TEST' })];
    try {
      // Both start from the same checkpoint, as a stale holder and the new one would.
      expect(await a.checkpoint()).toBeNull();
      expect(await b.checkpoint()).toBeNull();
      await b.enqueue([task('t5')], pos(5));
      await b.enqueue([], pos(6));
      await expect(a.enqueue([task('t3')], pos(3))).rejects.toThrow(/another dispatcher/);
      expect(await b.checkpoint()).toEqual(pos(6));
      // One that read the checkpoint again goes on from there.
      expect(await a.checkpoint()).toEqual(pos(6));
      await a.enqueue([], pos(7));
      expect(await b.checkpoint()).toEqual(pos(7));
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe.skipIf(!natsAvailable)('the NATS queue on streams and consumers made before', () => {
  let server: NatsServer;
  beforeAll(async () => {
    server = await startNats();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('updates a stream and a consumer whose configuration differs from what this version asks for', async () => {
    const { jetstreamManager, AckPolicy, DeliverPolicy, RetentionPolicy, StorageType } = await import('@nats-io/jetstream');
    const { connect } = await import('@nats-io/transport-node');
    const nc = await connect({ servers: server.url });
    try {
      const jsm = await jetstreamManager(nc);
      // As an earlier version left them: a shorter duplicate window and ack wait.
      await jsm.streams.add({ name: 'CFG_TEST', subjects: ['cfg_test.tasks'], retention: RetentionPolicy.Workqueue, storage: StorageType.File, duplicate_window: 60 * 1_000_000_000 });
      await jsm.consumers.add('CFG_TEST', { durable_name: 'cfg_test_workers', ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, ack_wait: 10_000_000_000, max_deliver: -1 });
      const q = await NatsDeliveryQueue.open(nc, { prefix: 'CFG_TEST', ackWaitMs: 45_000, maxAckPending: 500 });
      expect((await jsm.streams.info('CFG_TEST')).config.duplicate_window).toBe(2 * 60 * 1_000_000_000);
      const consumer = (await jsm.consumers.info('CFG_TEST', 'cfg_test_workers')).config;
      expect([consumer.ack_wait, consumer.max_ack_pending]).toEqual([45_000_000_000, 500]);
      // A second open finds everything as it asks: nothing to change, nothing fails.
      await NatsDeliveryQueue.open(nc, { prefix: 'CFG_TEST', ackWaitMs: 45_000, maxAckPending: 500 });
      await q.close();
    } finally {
      await nc.close();
    }
  });
});

describe('defining a stream when the look-up fails for another reason than "not found"', () => {
  it('tries the look-up again instead of creating it over the existing one', async () => {
    const { defineStream } = await import('../../dispatcher/queue/nats-define.js');
    const calls: string[] = [];
    let lookups = 0;
    const jsm = {
      streams: {
        info: async () => {
          calls.push('info');
          if (++lookups === 1) throw new Error('TIMEOUT');
          return { config: { name: 'S', subjects: ['s.a'] } };
        },
        add: async () => void calls.push('add'),
        update: async () => void calls.push('update'),
      },
    } as never;
    await defineStream(jsm, { name: 'S', subjects: ['s.a'] }, { retryMs: 1 });
    expect(calls).toEqual(['info', 'info']);
  });

  it('looks again when its create fails because another process created it in between, and fails with the reason when a create always fails', async () => {
    const { defineStream } = await import('../../dispatcher/queue/nats-define.js');
    const { JetStreamApiError } = await import('@nats-io/jetstream');
    const notFound = () => new JetStreamApiError({ code: 404, err_code: 10059, description: 'stream not found' });
    const overlap = () => new JetStreamApiError({ code: 400, err_code: 10065, description: 'subjects overlap with an existing stream' });
    // What the server answers a second process starting at the same moment: not found, then its create refused.
    const calls: string[] = [];
    let created = false;
    const racing = {
      streams: {
        info: async () => {
          calls.push('info');
          if (!created) {
            created = true; // the other process's create lands now
            throw notFound();
          }
          return { config: { name: 'S', subjects: ['s.a'] } };
        },
        add: async () => {
          calls.push('add');
          throw overlap();
        },
        update: async () => void calls.push('update'),
      },
    } as never;
    await defineStream(racing, { name: 'S', subjects: ['s.a'] }, { retryMs: 1 });
    expect(calls).toEqual(['info', 'add', 'info']);
    // A stream that can never be created (its subjects taken by another of the account's streams).
    const taken = {
      streams: {
        info: async () => {
          throw notFound();
        },
        add: async () => {
          throw overlap();
        },
        update: async () => undefined,
      },
    } as never;
    await expect(defineStream(taken, { name: 'S', subjects: ['s.a'] }, { attempts: 3, retryMs: 1 })).rejects.toThrow('stream S: could not create it (subjects overlap with an existing stream)');
  });
});

describe('opening a KV bucket that processes share (the queue\'s state, the leases)', () => {
  it('opens it again when its create lost to another process starting at the same moment, and fails with the reason when it never opens', async () => {
    const { openBucket } = await import('../../projections/nats-bucket.js');
    const { JetStreamApiError } = await import('@nats-io/jetstream');
    const overlap = () => new JetStreamApiError({ code: 400, err_code: 10065, description: 'subjects overlap with an existing stream' });
    const bucket = { bucket: 'T_STATE' } as never;
    const names: string[] = [];
    let creates = 0;
    const racing = {
      create: async (name: string) => {
        names.push(name);
        if (++creates === 1) throw overlap();
        return bucket;
      },
    };
    expect(await openBucket(racing, 'T_STATE', { history: 1 }, 5, 1)).toBe(bucket);
    expect(names).toEqual(['T_STATE', 'T_STATE']);
    const never = {
      create: async () => {
        throw overlap();
      },
    };
    await expect(openBucket(never, 'T_STATE', { history: 1 }, 3, 1)).rejects.toThrow('NATS bucket T_STATE: could not open it (subjects overlap with an existing stream)');
  });
});

describe.skipIf(!natsAvailable)('the NATS queue counting attempts', () => {
  let server: NatsServer;
  beforeAll(async () => {
    server = await startNats();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('hands a task fetched but never run (buffered at a graceful stop) to the next consumer as attempt 1', async () => {
    const q = await NatsDeliveryQueue.connect(server.url, { prefix: 'COUNT_TEST', ackWaitMs: 2_000, onError: () => undefined });
    try {
      const seen: Array<[string, number]> = [];
      let release: () => void = () => undefined;
      const gate = new Promise<void>((r) => (release = r));
      const first = q.consume(async (l) => {
        seen.push([l.task.id, l.attempt]);
        if (l.task.id === 'one') await gate;
        return { kind: 'done' };
      }, { concurrency: 1 });
      await q.add([task('one'), task('two')]);
      await waitUntil('the first task to run', () => seen.length === 1, 10_000);
      // Let the consumer fetch what it will behind the one in flight, then stop it.
      await new Promise((r) => setTimeout(r, 300));
      const stopping = first.stop();
      release();
      await stopping;
      expect(seen).toEqual([['one', 1]]);

      const next = q.consume(async (l) => {
        seen.push([l.task.id, l.attempt]);
        return { kind: 'done' };
      }, { concurrency: 1 });
      await waitUntil('the second task', () => seen.some(([id]) => id === 'two'), 10_000);
      await next.stop();
      expect(seen).toEqual([['one', 1], ['two', 1]]);
    } finally {
      await q.close();
    }
  });

  it('hands a task fetched by a process that died before running it to the next worker as attempt 1', async () => {
    const { jetstream } = await import('@nats-io/jetstream');
    const { connect } = await import('@nats-io/transport-node');
    const q = await NatsDeliveryQueue.connect(server.url, { prefix: 'CRASH_TEST', ackWaitMs: 1_000, onError: () => undefined });
    try {
      await q.add([task('fetched')]);
      // Another process fetches the task and dies before running it: no ack, no nak.
      const nc = await connect({ servers: server.url });
      const c = await jetstream(nc).consumers.get('CRASH_TEST', 'crash_test_workers');
      const fetched = await c.fetch({ max_messages: 1, expires: 5_000 });
      for await (const m of fetched) {
        expect(m.info.deliveryCount).toBe(1);
        break;
      }
      await nc.close();
      const seen: Array<[string, number]> = [];
      const worker = q.consume(async (l) => {
        seen.push([l.task.id, l.attempt]);
        return { kind: 'done' };
      }, { concurrency: 1 });
      await waitUntil('the task, once its ack wait is over', () => seen.length > 0, 15_000);
      await worker.stop();
      expect(seen).toEqual([['fetched', 1]]);
    } finally {
      await q.close();
    }
  });
});
