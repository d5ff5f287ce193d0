import { randomBytes } from 'node:crypto';
import { invalidField, missingField, notFound } from '../domain/shared/errors.js';
import { endpointEvolver, webhookEndpointStream } from '../domain/webhook-endpoint/events.js';
import { load } from '../eventlog/load.js';
import type { EventLog } from '../eventlog/port.js';
import type { Sealer } from '../eventlog/sealing.js';
import { type Delivery, type DeliveryLog, deliveryView } from './deliveries.js';
import { checkEnvelope, envelopesIn, isPingEnvelopeId, pingEnvelopeId, seqOfEnvelopeId } from './envelope.js';
import { PING } from './event-types.js';
import { ALL, encodeCursor, typeMatcher } from './feed-cursor.js';
import { parseBound, rangeQuery } from './feed-range.js';
import type { DeliveryQueue, DeliveryTask } from './queue/port.js';
import type { Replay, ReplayStore } from './replays.js';
import type { WebhookSender } from './send.js';
import type { Throttle } from './throttle.js';
import { deliveryId, pendingDelivery, sendAttempt } from './worker.js';
import type { DisabledReason } from '../domain/webhook-endpoint/events.js';

export interface OperationsDeps {
  log: EventLog;
  deliveries: DeliveryLog;
  replays: ReplayStore;
  /** The process's delivery queue, opened on first use (an API process may never need it). */
  queue: () => Promise<DeliveryQueue>;
  /** A sender for test deliveries, made on first use. */
  sender: () => WebhookSender;
  /** The endpoints' throttle the worker asks too (decisions.md §12 maxPerSecond): a test ping is a request like any other. */
  throttle?: () => Promise<Throttle>;
  /** The worker's auto-disable too: an endpoint that answers a ping 410 Gone is disabled (decisions.md §12), if still at `sentTo`. */
  disable?: (target: { id: number; team: number }, reason: DisabledReason, sentTo: string) => Promise<void>;
  /** The main key's sealer, which opens the endpoints' signing secrets (decisions.md §17). */
  mainSealer: Sealer;
  now?: () => Date;
}

const HOUR_MS = 3_600_000;
const random = () => randomBytes(9).toString('base64url').replace(/[-_]/g, '0');

/**
 * A test envelope's body, rebuilt byte for byte from its id for a resend: the id (pingEnvelopeId)
 * is unique, in a range of numbers no log event's reaches, and carries its instant like every envelope id.
 */
const pingBody = (id: string, team: number, endpointId: number) =>
  JSON.stringify({ id, type: PING, created: Number(id.slice(id.lastIndexOf('_') + 1)), team, version: 1, data: { endpointId } });

export const replayView = ({ id, status, queued, sent, failed }: Replay) => ({ id, status, queued, sent, failed });

/**
 * The webhook operations of decisions.md §12 that act on one endpoint: a test, a resend, a replay
 * (queued by ReplayRunner, in the dispatcher), the hourly stats. Routes check the endpoint is the
 * team's first.
 */
export class WebhookOperations {
  constructor(private readonly deps: OperationsDeps) {}

  private now(): Date {
    return this.deps.now?.() ?? new Date();
  }

  /**
   * Sends one `webhook.ping` now, records the attempt (succeeded or failed, never retried) and
   * answers it; an answer of 410 Gone disables the endpoint, where it still has the URL that answered.
   */
  async test(team: number, endpointId: number) {
    const now = this.now();
    const endpoint = async () => {
      const { state } = await load(this.deps.log, webhookEndpointStream(endpointId), endpointEvolver);
      if (!state.exists || state.deleted || state.team !== team) throw notFound('webhook endpoint', endpointId);
      return state;
    };
    let ep = await endpoint();
    const eventId = pingEnvelopeId(Math.floor(now.getTime() / 1000));
    const body = pingBody(eventId, team, endpointId);
    await checkEnvelope(JSON.parse(body));
    const task = { id: `test.${eventId}.${endpointId}`, endpointId, eventId, eventType: PING, body };
    // A throttled endpoint is sent the ping in its turn among the live deliveries (decisions.md
    // §12: never more than maxPerSecond requests in any second): the call waits for it.
    if (ep.maxPerSecond && this.deps.throttle) {
      const throttle = await this.deps.throttle();
      for (let turn = await throttle.admit(endpointId, ep.maxPerSecond); !turn.go; turn = await throttle.admit(endpointId, ep.maxPerSecond))
        await new Promise((r) => setTimeout(r, turn.deferMs));
      // Sent to the endpoint as it is in its turn (an operator may have moved it meanwhile).
      ep = await endpoint();
    }
    const sentAt = this.now();
    const r = await sendAttempt(this.deps.sender(), this.deps.mainSealer, ep, task, deliveryId(task.id, 1), sentAt);
    const row: Delivery = {
      ...pendingDelivery(task, 1, null),
      status: r.ok ? 'succeeded' : 'failed',
      responseStatus: r.responseStatus,
      durationMs: r.durationMs,
      error: r.error,
      attemptedAt: sentAt.toISOString(),
    };
    await this.deps.deliveries.record([row]);
    if (r.responseStatus === 410) await this.deps.disable?.({ id: endpointId, team }, 'gone', ep.url);
    return deliveryView(row);
  }

  /** A new attempt chain for a delivery's envelope: the same id and body, new task and delivery ids. */
  async resend(team: number, endpointId: number, id: string) {
    const d = await this.deps.deliveries.get(endpointId, id);
    const body = d && (await this.bodyOf(team, endpointId, d.eventId));
    if (!d || !body) throw notFound('delivery', id);
    const task: DeliveryTask = { id: `resend.${random()}.${d.eventId}.${endpointId}`, endpointId, team, eventId: d.eventId, eventType: d.eventType, body };
    const pending = pendingDelivery(task, 1, this.now().toISOString());
    await this.deps.deliveries.recordPending([pending]);
    await (await this.deps.queue()).add([task]);
    return deliveryView(pending);
  }

  /** The envelope an id names, rebuilt from the log as the dispatcher built it (or a test's, from its id). */
  private async bodyOf(team: number, endpointId: number, eventId: string): Promise<string | null> {
    // A ping's id, or one of the form pings had before theirs were numbers (`evt_ping<random>_<secs>`), still in the delivery log.
    if (isPingEnvelopeId(eventId) || /^evt_ping[A-Za-z0-9]+_\d+$/.test(eventId)) return pingBody(eventId, team, endpointId);
    const seq = seqOfEnvelopeId(eventId);
    const readTeam = this.deps.log.readTeam?.bind(this.deps.log);
    if (seq === null || !readTeam) return null;
    const prepare = seq / 10n;
    const index = Number(seq % 10n);
    // The event's commit position is at or after its prepare position (equal when embedded).
    for (const e of await readTeam(team, { commit: prepare, prepare }, 20, true)) {
      if (e.position.prepare !== prepare) continue;
      const envelope = (await envelopesIn(this.deps.log, e))[index];
      return envelope?.id === eventId ? JSON.stringify(envelope) : null;
    }
    return null;
  }

  /** Checks the range and records the job; the dispatcher's ReplayRunner picks it up. */
  async replay(team: number, endpointId: number, body: { from?: unknown; to?: unknown; types?: unknown }) {
    const { from, to, types } = body;
    if (from === undefined || from === null) throw missingField('from', 'from is required: a date-time such as 2026-03-01T00:00:00Z, or a change-feed cursor.');
    if (typeof from !== 'string') throw invalidField('from', 'from must be a date-time such as 2026-03-01T00:00:00Z, or a change-feed cursor.');
    if (to !== undefined && to !== null && typeof to !== 'string') throw invalidField('to', 'to must be a date-time or a change-feed cursor.');
    if (types !== undefined && types !== null && (!Array.isArray(types) || !types.length || types.some((t) => typeof t !== 'string')))
      throw invalidField('types', 'types must be a non-empty array of event type names or prefixes such as "constituent.*".');
    const range = rangeQuery(parseBound(from, 'from'), typeof to === 'string' ? parseBound(to, 'to') : undefined, undefined);
    if (types) typeMatcher(types as string[]);
    // Without `to`, the range ends where the log stands now: later events reach the endpoint live,
    // and a replay under steady writes still ends.
    const head = await this.deps.log.head();
    const replay: Replay = {
      id: `rpl_${random()}`,
      team,
      endpointId,
      from,
      to: typeof to === 'string' ? to : encodeCursor({ position: head, seen: ALL }),
      types: (types as string[] | null | undefined) ?? null,
      // An empty log has nothing to replay (and a cursor at its start would mean "no end").
      status: head ? 'running' : 'done',
      queued: 0,
      sent: 0,
      failed: 0,
      next: encodeCursor(range.after),
      exhausted: !head,
      error: null,
      createdAt: this.now().toISOString(),
    };
    await this.deps.replays.create(replay);
    return replayView(replay);
  }

  async replayOf(endpointId: number, id: string) {
    const r = await this.deps.replays.get(id);
    if (!r || r.endpointId !== endpointId) throw notFound('replay', id);
    return replayView(r);
  }

  /** Attempts per hour over the last `hours` hours (the current one last), zeros included. */
  async stats(endpointId: number, hours: number) {
    const current = Math.floor(this.now().getTime() / HOUR_MS) * HOUR_MS;
    const since = current - (hours - 1) * HOUR_MS;
    const counted = new Map((await this.deps.deliveries.hourly(endpointId, since)).map((h) => [h.hour, h]));
    return Array.from({ length: hours }, (_, i) => {
      const hour = since + i * HOUR_MS;
      const c = counted.get(hour);
      return { hour: new Date(hour).toISOString(), succeeded: c?.succeeded ?? 0, failed: c?.failed ?? 0 };
    });
  }
}
