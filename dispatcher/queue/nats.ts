import { AckPolicy, DeliverPolicy, jetstream, type JetStreamClient, jetstreamManager, type JsMsg, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { type KV, Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { type Position, positionFromString, positionToString } from '../../domain/shared/events.js';
import { isConflict } from '../../projections/lease-nats.js';
import { openBucket } from '../../projections/nats-bucket.js';
import { natsConnectOptions } from './nats-connect.js';
import { NatsLink } from './nats-link.js';
import { defineConsumer, defineStream } from './nats-define.js';
import { ATTEMPT_HEADER, defineDelayTiers, DELAY_TIERS_MS, type DelayNames, delayNames, publishDue, pumpTier } from './nats-delay.js';
import type { Consumer, DeliveryQueue, DeliveryTask, Handled, Lease } from './port.js';

export interface NatsQueueOptions {
  /** Stream and consumer names, so tests can keep apart. */
  prefix?: string;
  /** How long an attempt may run before JetStream hands the task to another worker. */
  ackWaitMs?: number;
  /**
   * Tasks handed out and not yet acked, across all workers. Only attempts in flight count (retries
   * wait in the delay tiers), so this only needs to exceed the workers' total concurrency.
   */
  maxAckPending?: number;
  /** Failures of the delay tiers' pumps (the connection dropped, say); they carry on. */
  onError?: (err: unknown) => void;
}

/** The KV key of a team's last erasure (noteErasure). */
const erasureKey = (team: number) => `erasure-${team}`;
/** The position a team's erasure entry holds; null for none. */
const erasedAt = (e: { value: Uint8Array } | null): bigint | null => (e && e.value.length ? BigInt(codec.decode(e.value)) : null);

const codec = { encode: (s: string) => new TextEncoder().encode(s), decode: (b: Uint8Array) => new TextDecoder().decode(b) };

/**
 * The production queue: a JetStream work-queue stream. Every task is published with its
 * deterministic id as Nats-Msg-Id, so a republish after a crash (between publishing and saving
 * the checkpoint) is dropped by the stream's duplicate window. A retry is published to a delay
 * tier (nats-delay.ts) with its attempt number in a header, and only then is the message acked:
 * a waiting retry holds nothing on the work consumer. The dispatcher's checkpoint is kept in a
 * KV bucket next to the stream.
 */
export class NatsDeliveryQueue implements DeliveryQueue {
  /** The connection's state: readiness reports the queue reconnecting while it is down. */
  readonly link: NatsLink;
  /** The checkpoint entry's revision as this queue last read or wrote it (0: none yet; null: never read). */
  private checkpointRevision: number | null = null;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly kv: KV,
    private readonly stream: string,
    private readonly subject: string,
    private readonly durable: string,
    private readonly delays: DelayNames,
    private readonly onError: (err: unknown) => void,
    private readonly ownsConnection: boolean,
  ) {
    this.link = new NatsLink(nc);
  }

  /** False while the queue's connection is down (decisions.md §1: degraded, not down). */
  reachable(): boolean {
    return this.link.up;
  }

  static async connect(url: string, options: NatsQueueOptions = {}): Promise<NatsDeliveryQueue> {
    const nc = await connect({ ...natsConnectOptions(url), name: 'turnout-webhooks', maxReconnectAttempts: -1 });
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
    await defineStream(jsm, config);
    const consumer = {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: (options.ackWaitMs ?? 60_000) * 1_000_000,
      max_deliver: -1,
      max_ack_pending: options.maxAckPending ?? 10_000,
    };
    await defineConsumer(jsm, stream, consumer);
    const delays = delayNames(prefix, subject);
    await defineDelayTiers(jsm, delays);
    const js = jetstream(nc);
    const kv = await openBucket(new Kvm(js), `${prefix}_STATE`, { history: 1 });
    const onError = options.onError ?? ((err) => console.error('webhook delay tier', err));
    return new NatsDeliveryQueue(nc, js, kv, stream, subject, durable, delays, onError, ownsConnection);
  }

  /** The work stream's messages and those waiting in the delay tiers (retries, throttled tasks). */
  async depth(): Promise<number> {
    const jsm = await this.js.jetstreamManager();
    const [work, delayed] = await Promise.all([jsm.streams.info(this.stream), jsm.streams.info(this.delays.stream)]);
    return work.state.messages + delayed.state.messages;
  }

  async checkpoint(): Promise<Position | null> {
    const e = await this.kv.get('checkpoint');
    this.checkpointRevision = e?.revision ?? 0;
    return e && e.value.length ? positionFromString(codec.decode(e.value)) : null;
  }

  async enqueue(tasks: DeliveryTask[], checkpoint: Position): Promise<void> {
    await Promise.all(tasks.map((t) => this.js.publish(this.subject, JSON.stringify(t), { msgID: t.id })));
    // A compare-and-set on the revision this dispatcher read or wrote last: one that lost its lease
    // without knowing yet (a pause longer than the TTL) cannot move the checkpoint back under the
    // new holder, which would enqueue again what was delivered.
    const value = positionToString(checkpoint);
    if (this.checkpointRevision === null) await this.checkpoint();
    try {
      this.checkpointRevision = this.checkpointRevision ? await this.kv.update('checkpoint', value, this.checkpointRevision) : await this.kv.create('checkpoint', value);
    } catch (err) {
      if (!isConflict(err)) throw err;
      throw new Error('another dispatcher wrote the webhook checkpoint since this one read it: this one no longer holds the lease', { cause: err });
    }
  }

  /** Same subject as live tasks: a replay keeps only a small window of its tasks queued (replay-runner.ts), so live ones never wait behind many. */
  async add(tasks: DeliveryTask[]): Promise<void> {
    await Promise.all(tasks.map((t) => this.js.publish(this.subject, JSON.stringify(t), { msgID: t.id })));
  }

  consume(handler: (lease: Lease) => Promise<Handled>, options: { concurrency: number }): Consumer {
    const inflight = new Set<Promise<void>>();
    let stopped = false;
    let messages: Awaited<ReturnType<Awaited<ReturnType<JetStreamClient['consumers']['get']>>['consume']>> | null = null;
    let slot: (() => void) | null = null;

    // A task's attempt is the one it was published for, whatever its redeliveries: a message
    // fetched and never run (buffered at a graceful stop, a crash) comes back with a higher
    // delivery count but had no attempt. One that did run and was not acked (the
    // process died mid-attempt) runs the same attempt again, under the same delivery id: at least
    // once, which the receiver de-duplicates on.
    const attemptOf = (m: JsMsg) => Number(m.headers?.get(ATTEMPT_HEADER) || 1);

    const run = async (m: JsMsg) => {
      let task: DeliveryTask;
      try {
        task = JSON.parse(codec.decode(m.data)) as DeliveryTask;
      } catch (err) {
        this.onError(err);
        return m.term('not a delivery task');
      }
      const attempt = attemptOf(m);
      let outcome: Handled;
      let handled: Handled | undefined;
      try {
        handled = await handler({ task, attempt });
        // The attempt's record is stored before the task moves on, as when the handler awaited it.
        await handled.written;
        outcome = handled;
      } catch {
        // Its record not stored: the attempt again shortly, with the body it was made with (one
        // built again after an erasure, never the old one back into the stream).
        outcome = { kind: 'retry', delayMs: 1000, ...(handled?.body !== undefined ? { body: handled.body } : {}) };
      }
      try {
        // The retry is stored (its publish acked) before this message goes: never lost, at worst
        // twice. Its id names the attempt, so a second publish of it (a crash before the ack below)
        // is dropped by the stream.
        // A body built again (an erasure since it was queued) is what goes on, not the old one.
        const data = outcome.kind !== 'done' && outcome.body !== undefined ? codec.encode(JSON.stringify({ ...task, body: outcome.body })) : m.data;
        if (outcome.kind === 'retry') await publishDue(this.js, this.delays, data, attempt + 1, Date.now() + outcome.delayMs, `${task.id}#${attempt + 1}`);
        // A deferral is not an attempt: the same number comes back, under an id of its own.
        if (outcome.kind === 'defer') await publishDue(this.js, this.delays, data, attempt, Date.now() + outcome.delayMs, `${task.id}#${attempt}@${Date.now()}`);
      } catch (err) {
        // Nothing stored the next step: the message comes back to run this attempt again.
        this.onError(err);
        m.nak(1000);
        return;
      }
      try {
        // Confirmed, so a graceful stop leaves no ack in flight for a restart to redo.
        await m.ackAck();
      } catch (err) {
        // No nak here: once an ack was sent the message refuses one (nats.js keeps it as acked),
        // and the next step is stored either way. An ack that never arrived brings the message
        // back after the ack wait, to run this same attempt again (at least once).
        this.onError(err);
      }
    };

    const pumps = DELAY_TIERS_MS.map((tier) => pumpTier(this.js, this.delays, tier, this.onError, this.link));
    // After a reconnect the consumer starts afresh (nats-link.ts): the loop below gets it again.
    const unwatch = this.link.onReconnect(() => messages?.stop());
    const loop = (async () => {
      // As the delay tiers' pumps: a JetStream request that times out (a busy server or host)
      // must not leave this process consuming nothing until it restarts, so it tries again.
      while (!stopped) {
        try {
          const c = await this.js.consumers.get(this.stream, this.durable);
          messages = await c.consume({ max_messages: Math.max(options.concurrency, 1) });
          if (stopped) messages.stop();
          for await (const m of messages) {
            // Fetched after the stop (buffered behind the attempts in flight): handed back at
            // once for another worker, not left to its ack wait.
            if (stopped) {
              m.nak();
              continue;
            }
            const p = run(m).finally(() => {
              inflight.delete(p);
              slot?.();
            });
            inflight.add(p);
            while (inflight.size >= options.concurrency && !stopped) await new Promise<void>((r) => (slot = r));
          }
        } catch (err) {
          this.onError(err);
        }
        if (!stopped) await new Promise((r) => setTimeout(r, 1000));
      }
    })();

    return {
      stop: async () => {
        stopped = true;
        unwatch();
        slot?.();
        messages?.stop();
        await loop.catch(() => undefined);
        await Promise.all([...inflight, ...pumps.map((p) => p.stop())]);
      },
    };
  }

  /** Kept in the queue's KV bucket, one key a team, moved only forward (a compare-and-set). */
  async noteErasure(team: number, position: bigint): Promise<void> {
    const key = erasureKey(team);
    for (;;) {
      const e = await this.kv.get(key);
      const held = erasedAt(e);
      if (held !== null && held >= position) return;
      try {
        if (e && e.revision) await this.kv.update(key, String(position), e.revision);
        else await this.kv.create(key, String(position));
        return;
      } catch (err) {
        // Another process's erasure of the team wrote first: read it again.
        if (!isConflict(err)) throw err;
      }
    }
  }

  /** Read from the server at each attempt: an erasure another process just answered counts at once. */
  async erasedThrough(team: number): Promise<bigint | null> {
    return erasedAt(await this.kv.get(erasureKey(team)));
  }

  async close(): Promise<void> {
    if (this.ownsConnection) await this.nc.drain().catch(() => this.nc.close());
  }
}
