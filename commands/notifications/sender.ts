import { randomUUID } from 'node:crypto';
import path from 'node:path';
import {
  type DeliveryState,
  decideAttemptFailed,
  decideClaim,
  deliveryEvolver,
  notificationStream,
} from '../../domain/notification/delivery.js';
import { NOTIFICATIONS, type NotificationDoc, dueQuery, sendingQuery } from '../../projections/outbox.js';
import { VOLUNTEER_TASKS } from '../../projections/volunteer-tasks.js';
import { WEBHOOK_ENDPOINTS } from '../../projections/webhook-endpoints.js';
import type { Doc, ReadStore } from '../../projections/store/port.js';
import { type DomainEvent } from '../../domain/shared/events.js';
import { backoffDelay } from '../../eventlog/backoff.js';
import { load } from '../../eventlog/load.js';
import type { WriteContext } from '../context.js';
import { metadataOf } from '../context.js';
import { type EventLog, NO_STREAM, WrongExpectedRevision } from '../../eventlog/port.js';
import { composeMessage } from './message.js';
import { FileTransport, type MailTransport, MemoryTransport, SmtpTransport } from './transport.js';
import { standingAlone } from '../../domain/shared/text.js';

export interface SenderOptions {
  transport: MailTransport;
  from?: string;
  now?: () => Date;
  intervalMs?: number;
  /** How long a claim is held before another sender may look at it again (longer than a send can take). */
  leaseMs?: number;
  maxAttempts?: number;
  /** The wait after a refused attempt: doubling from the first, capped at the longest, with jitter (eventlog/backoff.ts). */
  retryBaseMs?: number;
  retryMaxMs?: number;
  batchSize?: number;
  onError?: (err: unknown) => void;
}

export interface NotificationSender {
  /** One pass: recover stale claims, then send what is due. Resolves with the number sent. */
  tick(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Sends due notifications through the transport, at most once each (docs/volunteers.md):
 * 1. claim: append NotificationClaimed to `notification-<id>` expecting the revision just read;
 *    of two senders (or a sender and its restarted self) only one append succeeds;
 * 2. hand the message to the transport;
 * 3. append NotificationSent (or NotificationAttemptFailed, which releases the claim for a later
 *    retry) expecting the claim's revision.
 * A claim left over by a crash between 1 and 3 is resolved once its lease ran out: if the
 * transport can tell whether the message arrived (the .eml file exists) it is recorded as sent or
 * released; if it cannot (SMTP) it is recorded as failed rather than risking a second send.
 */
export function startNotificationSender(deps: { log: EventLog; store: ReadStore }, o: SenderOptions): NotificationSender {
  const now = o.now ?? (() => new Date());
  const owner = randomUUID();
  const leaseMs = o.leaseMs ?? 120_000;
  const from = o.from ?? 'Turnout <no-reply@turnout.invalid>';
  // An hour caps a long run of attempts; the default five end well before it.
  const retry = { initialMs: o.retryBaseMs ?? 60_000, maxMs: o.retryMaxMs ?? 3_600_000 };
  const retryIn = (attempt: number) => backoffDelay(retry, attempt);
  const ctx = (team: number): WriteContext => ({ team, source: 'Application', keyName: null, correlationId: `notifications-${owner}`, now: now() });
  const append = (n: NotificationDoc, events: DomainEvent[], expected: bigint | null) =>
    deps.log.append(notificationStream(n.id), events.map((e) => ({ ...e, metadata: metadataOf(ctx(n.FkTeam)) })), expected === null ? NO_STREAM : expected);

  async function recover(): Promise<void> {
    const stale = await deps.store.find<NotificationDoc>(sendingQuery());
    for (const n of stale.items) {
      const { state, revision } = await load<DeliveryState>(deps.log, notificationStream(n.id), deliveryEvolver);
      if (state.status !== 'claimed' || state.leaseUntil > now().getTime()) continue;
      const delivered = await o.transport.wasDelivered(n.id);
      const events: DomainEvent[] =
        delivered === true
          ? [{ type: 'NotificationSent', data: { id: n.id, recovered: true } }]
          : delivered === false
            ? decideAttemptFailed(state, { id: n.id, error: 'The sender stopped before handing the message over.', now: now(), maxAttempts: o.maxAttempts ?? 5, retryInMs: () => 0 })
            : [{ type: 'NotificationFailed', data: { id: n.id, error: 'The sender stopped while sending; delivery is unknown, so it is not sent again (at most once).' } }];
      await append(n, events, revision).catch(ignoreConflict);
    }
  }

  async function sendOne(n: NotificationDoc): Promise<boolean> {
    // Canceled since the due list was read: leave it.
    if ((await deps.store.get<NotificationDoc>(NOTIFICATIONS, n.id))?.status !== 'pending') return false;
    const loaded = await load<DeliveryState>(deps.log, notificationStream(n.id), deliveryEvolver);
    const claim = decideClaim(loaded.state, { id: n.id, owner, now: now(), leaseMs });
    if (!claim.length) return false;
    let claimed;
    try {
      claimed = await append(n, claim, loaded.revision);
    } catch (err) {
      if (err instanceof WrongExpectedRevision) return false; // another sender holds it
      throw err;
    }
    const state = claim.reduce(deliveryEvolver.evolve, loaded.state);
    try {
      // The message reads the record as it stands when it goes out: the task, or the disabled endpoint.
      const about = n.endpointId !== null && n.endpointId !== undefined ? await deps.store.get<Doc>(WEBHOOK_ENDPOINTS, n.endpointId) : await deps.store.get<Doc>(VOLUNTEER_TASKS, n.taskId ?? 0);
      await o.transport.send(composeMessage(n, about, from));
    } catch (err) {
      const error = withoutRecipient(err instanceof Error ? err.message : String(err), n.to);
      const events = decideAttemptFailed(state, { id: n.id, error, now: now(), maxAttempts: o.maxAttempts ?? 5, retryInMs: retryIn });
      await append(n, events, claimed.nextExpectedRevision);
      return false;
    }
    await append(n, [{ type: 'NotificationSent', data: { id: n.id } }], claimed.nextExpectedRevision);
    return true;
  }

  async function tick(): Promise<number> {
    await recover();
    const due = await deps.store.find<NotificationDoc>(dueQuery(now(), o.batchSize ?? 50));
    let sent = 0;
    for (const n of due.items) if (await sendOne(n)) sent++;
    return sent;
  }

  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | null = null;
  const loop = () => {
    if (stopped) return;
    running = tick()
      .catch((err) => o.onError?.(err))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, o.intervalMs ?? 1_000);
      });
  };
  timer = setTimeout(loop, 0);
  return {
    tick: async () => {
      await running;
      return tick();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      await o.transport.close();
    },
  };
}

function ignoreConflict(err: unknown): void {
  if (!(err instanceof WrongExpectedRevision)) throw err;
}

/**
 * A transport's error without the recipient's address: a mail server's refusal names it ("550
 * <x@example.org>: Recipient address rejected", its domain folded as the server pleases), and the
 * error is kept in the message's delivery events, which an erasure (decisions.md §17) does not
 * rewrite, and in the outbox. The address is taken out in any case, and its part before the @,
 * where either stands alone.
 */
export function withoutRecipient(error: string, to: string | null): string {
  if (!to) return error;
  const at = to.lastIndexOf('@');
  // A shorter one ("in@...", "no@...") would take the words of the error with it.
  const names = [to, ...(at >= 3 ? [to.slice(0, at)] : [])];
  return names.reduce((out, name) => out.replace(standingAlone(name), 'the recipient'), error);
}

/** SMTP when TURNOUT_SMTP_URL is set, else .eml files under `<dataDir>/outbox/` (memory for `:memory:`). */
export function transportFor(config: { smtpUrl?: string; dataDir: string }): MailTransport {
  if (config.smtpUrl) return new SmtpTransport(config.smtpUrl);
  if (config.dataDir === ':memory:') return new MemoryTransport();
  return new FileTransport(path.join(config.dataDir, 'outbox'));
}

