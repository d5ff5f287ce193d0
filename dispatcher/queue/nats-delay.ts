import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager, type JsMsg, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { headers, type MsgHdrs } from '@nats-io/transport-node';
import type { NatsLink } from './nats-link.js';
import { defineConsumer, defineStream } from './nats-define.js';

/**
 * Retries scheduled without holding the message. A NAK with a delay keeps the message pending on
 * the work consumer, and pending messages count against its max_ack_pending: one dead endpoint
 * with enough retries waiting would stall every delivery. (JetStream's own scheduled delivery
 * needs nats-server 2.12.) So a retry is published to a delay tier and the original is acked.
 *
 * A tier is a subject of one work-queue stream whose messages all wait the same time, so its
 * consumer releases them in the order they were published: a tier only ever waits on its head,
 * one message per process at a time, and never blocks the work consumer or another tier. A
 * released message whose due time is still ahead goes to the largest tier that fits what is
 * left (tiers double, so a wait takes a few hops); one that is due goes back to the work subject.
 */
export const DELAY_TIERS_MS = Array.from({ length: 15 }, (_, k) => 250 * 2 ** k); // 250 ms to about 68 min

export const ATTEMPT_HEADER = 'Turnout-Attempt';
export const DUE_HEADER = 'Turnout-Due';

/** The tier a message due in `remainingMs` waits in next; null when it is due (within half the shortest tier). */
export function tierFor(remainingMs: number): number | null {
  if (remainingMs < DELAY_TIERS_MS[0] / 2) return null;
  let tier = DELAY_TIERS_MS[0];
  for (const t of DELAY_TIERS_MS) if (t <= remainingMs) tier = t;
  return tier;
}

export interface DelayNames {
  stream: string;
  /** The work subject released tasks go back to. */
  workSubject: string;
  subject(tier: number): string;
  durable(tier: number): string;
}

export function delayNames(prefix: string, workSubject: string): DelayNames {
  const lower = prefix.toLowerCase();
  return {
    stream: `${prefix}_DELAYED`,
    workSubject,
    subject: (tier) => `${lower}.delay.${tier}`,
    durable: (tier) => `${lower}_delay_${tier}`,
  };
}

export async function defineDelayTiers(jsm: JetStreamManager, names: DelayNames): Promise<void> {
  await defineStream(jsm, {
    name: names.stream,
    subjects: DELAY_TIERS_MS.map(names.subject),
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    duplicate_window: 2 * 60 * 1_000_000_000,
  });
  for (const tier of DELAY_TIERS_MS) {
    await defineConsumer(jsm, names.stream, {
      durable_name: names.durable(tier),
      filter_subject: names.subject(tier),
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      // A message may wait a whole tier before it is acked, plus the one prefetched behind it.
      ack_wait: (tier + 60_000) * 1_000_000,
      max_deliver: -1,
    });
  }
}

function taskHeaders(attempt: number, due?: number): MsgHdrs {
  const h = headers();
  h.set(ATTEMPT_HEADER, String(attempt));
  if (due !== undefined) h.set(DUE_HEADER, String(due));
  return h;
}

/**
 * Publishes `data` (a task) to run as `attempt` at `due` (epoch ms), waiting for JetStream's
 * publish ack, so the caller may ack the message it replaces. `msgID` makes a second publish of
 * the same step (a crash before that ack) a duplicate the stream drops.
 */
export async function publishDue(js: JetStreamClient, names: DelayNames, data: Uint8Array, attempt: number, due: number, msgID: string): Promise<void> {
  const tier = tierFor(due - Date.now());
  if (tier === null) await js.publish(names.workSubject, data, { msgID, headers: taskHeaders(attempt) });
  else await js.publish(names.subject(tier), data, { msgID: `${msgID}>${tier}`, headers: taskHeaders(attempt, due) });
}

/** Releases one tier's messages as they come due, until stopped. */
export function pumpTier(js: JetStreamClient, names: DelayNames, tier: number, onError: (err: unknown) => void, link?: NatsLink): { stop(): Promise<void> } {
  let stopped = false;
  let wake: (() => void) | null = null;
  let messages: { stop(): void } | null = null;
  const sleep = (ms: number) => new Promise<void>((r) => ((wake = r), setTimeout(r, ms)));

  const release = async (m: JsMsg) => {
    const releaseAt = Number(m.timestampNanos / 1_000_000n) + tier;
    while (!stopped && Date.now() < releaseAt) await sleep(Math.min(releaseAt - Date.now(), 30_000));
    if (stopped) return m.nak(); // another process takes it at once
    const attempt = Number(m.headers?.get(ATTEMPT_HEADER) || 1);
    const due = Number(m.headers?.get(DUE_HEADER) || 0);
    // The tier message's sequence names this hop: a second release of the same message is dropped.
    await publishDue(js, names, m.data, attempt, due, `delayed-${m.seq}`);
    m.ack();
  };

  // As the work consumer: after a reconnect the tier's consumer starts afresh (nats-link.ts).
  const unwatch = link?.onReconnect(() => messages?.stop());
  const loop = (async () => {
    while (!stopped) {
      try {
        const c = await js.consumers.get(names.stream, names.durable(tier));
        const it = await c.consume({ max_messages: 1 });
        messages = it;
        if (stopped) it.stop();
        for await (const m of it) {
          await release(m).catch((err) => (m.nak(1_000), onError(err)));
          if (stopped) break;
        }
      } catch (err) {
        if (!stopped) onError(err);
      }
      if (!stopped) await sleep(1_000);
    }
  })();

  return {
    stop: async () => {
      stopped = true;
      unwatch?.();
      messages?.stop();
      (wake as (() => void) | null)?.();
      await loop;
    },
  };
}
