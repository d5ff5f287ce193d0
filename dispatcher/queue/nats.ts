import { AckPolicy, DeliverPolicy, jetstream, type JetStreamClient, jetstreamManager, type JsMsg, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { type KV, Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { type Position, positionFromString, positionToString } from '../../domain/shared/events.js';
import type { Consumer, DeliveryQueue, DeliveryTask, Lease, Outcome } from './port.js';

export interface NatsQueueOptions {
  /** Stream and consumer names, so tests can keep apart. */
  prefix?: string;
  /** How long an attempt may run before JetStream hands the task to another worker. */
  ackWaitMs?: number;
}

const codec = { encode: (s: string) => new TextEncoder().encode(s), decode: (b: Uint8Array) => new TextDecoder().decode(b) };

/**
 * The production queue: a JetStream work-queue stream. Every task is published with its
 * deterministic id as Nats-Msg-Id, so a republish after a crash (between publishing and saving
 * the checkpoint) is dropped by the stream's duplicate window. A retry is a NAK with a delay:
 * JetStream redelivers the same message then, and its delivery count is the attempt number.
 * The dispatcher's checkpoint is kept in a KV bucket next to the stream.
 */
export class NatsDeliveryQueue implements DeliveryQueue {
  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly kv: KV,
    private readonly stream: string,
    private readonly subject: string,
    private readonly durable: string,
    private readonly ownsConnection: boolean,
  ) {}

  static async connect(url: string, options: NatsQueueOptions = {}): Promise<NatsDeliveryQueue> {
    const servers = url.replace(/^nats:\/\//, '');
    const nc = await connect({ servers, name: 'turnout-webhooks', maxReconnectAttempts: -1 });
    return NatsDeliveryQueue.open(nc, options, true);
  }

  static async open(nc: NatsConnection, options: NatsQueueOptions = {}, ownsConnection = false): Promise<NatsDeliveryQueue> {
    const prefix = options.prefix ?? 'TURNOUT_WEBHOOKS';
    const stream = prefix;
    const subject = `${prefix.toLowerCase()}.tasks`;
    const durable = `${prefix.toLowerCase()}_workers`;
    const jsm = await jetstreamManager(nc);
    const config = {
      name: stream,
      subjects: [subject],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      duplicate_window: 2 * 60 * 1_000_000_000, // 2 minutes, in nanoseconds
    };
    try {
      await jsm.streams.info(stream);
    } catch {
      await jsm.streams.add(config);
    }
    const consumer = {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: (options.ackWaitMs ?? 60_000) * 1_000_000,
      max_deliver: -1,
      // Tasks waiting for a delayed redelivery count as pending acks: allow many.
      max_ack_pending: 100_000,
    };
    try {
      await jsm.consumers.info(stream, durable);
    } catch {
      await jsm.consumers.add(stream, consumer);
    }
    const js = jetstream(nc);
    const kv = await new Kvm(js).create(`${prefix}_STATE`, { history: 1 });
    return new NatsDeliveryQueue(nc, js, kv, stream, subject, durable, ownsConnection);
  }

  async checkpoint(): Promise<Position | null> {
    const e = await this.kv.get('checkpoint');
    return e && e.value.length ? positionFromString(codec.decode(e.value)) : null;
  }

  async enqueue(tasks: DeliveryTask[], checkpoint: Position): Promise<void> {
    await Promise.all(tasks.map((t) => this.js.publish(this.subject, JSON.stringify(t), { msgID: t.id })));
    await this.kv.put('checkpoint', positionToString(checkpoint));
  }

  consume(handler: (lease: Lease) => Promise<Outcome>, options: { concurrency: number }): Consumer {
    const inflight = new Set<Promise<void>>();
    let stopped = false;
    let messages: Awaited<ReturnType<Awaited<ReturnType<JetStreamClient['consumers']['get']>>['consume']>> | null = null;
    let slot: (() => void) | null = null;

    const run = async (m: JsMsg) => {
      try {
        const task = JSON.parse(codec.decode(m.data)) as DeliveryTask;
        const outcome = await handler({ task, attempt: m.info.deliveryCount });
        if (outcome.kind === 'done') m.ack();
        else m.nak(outcome.delayMs);
      } catch {
        m.nak(1000);
      }
    };

    const loop = (async () => {
      const c = await this.js.consumers.get(this.stream, this.durable);
      messages = await c.consume({ max_messages: Math.max(options.concurrency, 1) });
      if (stopped) messages.stop();
      for await (const m of messages) {
        const p = run(m).finally(() => {
          inflight.delete(p);
          slot?.();
        });
        inflight.add(p);
        while (inflight.size >= options.concurrency && !stopped) await new Promise<void>((r) => (slot = r));
        if (stopped) break;
      }
    })();

    return {
      stop: async () => {
        stopped = true;
        slot?.();
        messages?.stop();
        await loop.catch(() => undefined);
        await Promise.all(inflight);
      },
    };
  }

  async close(): Promise<void> {
    if (this.ownsConnection) await this.nc.drain().catch(() => this.nc.close());
  }
}
