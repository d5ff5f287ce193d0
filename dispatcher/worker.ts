import { createHash } from 'node:crypto';
import type { EventLog } from '../eventlog/port.js';
import type { DisabledReason, EndpointState } from '../domain/webhook-endpoint/events.js';
import type { Sealer } from '../eventlog/sealing.js';
import { retryAfterMs } from './back-pressure.js';
import { type Delivery, type DeliveryLog, NOT_SENT } from './deliveries.js';
import { EndpointCache } from './endpoint-cache.js';
import { envelopeRebuilder, teamEventAt } from './erasure.js';
import { seqOfEnvelopeId } from './envelope.js';
import { PING } from './event-types.js';
import { openSigningSecrets, SecretUnopenable } from './secrets.js';
import { type Consumer, type DeliveryQueue, type DeliveryTask, type Handled, type Lease, liveTaskId, type Outcome } from './queue/port.js';
import { hasNextAttempt, retryDelayMs, type RetryPolicy } from './retry.js';
import type { SendResult, WebhookSender } from './send.js';
import type { Throttle } from './throttle.js';

/** An attempt not yet made, as the delivery log shows it until it is. */
export function pendingDelivery(task: Pick<DeliveryTask, 'id' | 'endpointId' | 'eventId' | 'eventType'>, attempt: number, nextAttemptAt: string | null): Delivery {
  return {
    id: deliveryId(task.id, attempt),
    endpointId: task.endpointId,
    eventId: task.eventId,
    eventType: task.eventType,
    attempt,
    status: 'pending',
    responseStatus: null,
    durationMs: null,
    error: null,
    attemptedAt: null,
    nextAttemptAt,
  };
}

/** X-Turnout-Delivery: one per attempt, derived so the delivery log's pending row names it in advance. */
export const deliveryId = (taskId: string, attempt: number) =>
  'dlv_' + createHash('sha256').update(`${taskId}#${attempt}`).digest('base64url').slice(0, 24);

export interface WorkerDeps {
  log: EventLog;
  queue: DeliveryQueue;
  deliveries: DeliveryLog;
  sender: WebhookSender;
  /** The main key's sealer, which opens the endpoints' signing secrets (decisions.md §17). */
  mainSealer: Sealer;
  policy: RetryPolicy;
  now?: () => Date;
  report?: (message: string) => void;
  /** Told when a replay's task is finished (delivered or given up): the replay's progress (replays.ts). */
  settled?: (replay: string, taskId: string, delivered: boolean) => Promise<void>;
  /** Keeps each endpoint under its maxPerSecond (decisions.md 12); without it nothing is throttled. */
  throttle?: Throttle;
  /** Auto-disable (decisions.md 12): how it is written, and after how long failing (TURNOUT_WEBHOOK_DISABLE_AFTER_HOURS). */
  /** Auto-disable: `sentTo` is the URL the failing attempt went to (an endpoint moved since is left alone). */
  disable?: { endpoint: (target: { id: number; team: number }, reason: DisabledReason, sentTo?: string) => Promise<void>; afterMs: number };
  /** The endpoints as they are now, kept between attempts (startWorker makes one). */
  endpoints?: EndpointCache;
  /** Told each attempt's outcome and time (the metrics, decisions.md §15). */
  observe?: (outcome: 'succeeded' | 'failed' | 'abandoned', seconds: number | null) => void;
  /** Present only while tracing is on: each attempt a span linked to the write that caused it (runtime/tracing.ts). */
  trace?: {
    attempt<R extends SendResult>(cause: string | undefined, attributes: Record<string, string | number>, fn: (traceparent: string) => Promise<R>): Promise<R>;
  };
}

/**
 * An attempt's outcome, saying for a finished task whether it was delivered, with the write of its
 * record still in flight: the queue finishes the task in the same commit where it can.
 */
type Attempted = ({ kind: 'done'; delivered: boolean } | (Exclude<Outcome, { kind: 'done' }> & { body?: string })) & { written?: Promise<void> };

/** An attempt not sent because a signing secret does not open with this process's main key. */
export type Unsent = SendResult & { keyMismatch: true };

/** An attempt that sent nothing, for `reason` (recorded after NOT_SENT). */
const notSent = (reason: string): Unsent => ({ ok: false, responseStatus: null, durationMs: 0, error: `${NOT_SENT}${reason}`, retryAfter: null, keyMismatch: true });

/**
 * Signs and sends one attempt of a task to the endpoint as it is now (the queue's attempts and a
 * test alike). A secret this process's main key does not open sends nothing: the attempt fails
 * with the reason, rather than reaching the receiver mis-signed.
 */
export async function sendAttempt(
  sender: WebhookSender,
  mainSealer: Sealer,
  ep: EndpointState,
  task: Pick<DeliveryTask, 'eventId' | 'eventType' | 'body'>,
  delivery: string,
  now: Date,
  traceparent?: string,
): Promise<SendResult | Unsent> {
  let secrets: string[];
  try {
    secrets = openSigningSecrets(mainSealer, ep, now);
  } catch (err) {
    if (!(err instanceof SecretUnopenable)) throw err;
    return notSent(err.message);
  }
  const signing = { eventId: task.eventId, eventType: task.eventType, delivery, secrets, t: Math.floor(now.getTime() / 1000), ...(traceparent ? { traceparent } : {}) };
  return sender.deliver(ep.url, task.body, signing);
}

/**
 * The body to send: as queued, unless the team had an erasure at a later event than the one it
 * was built as of (decisions.md §17: the queue records it, where it cannot rewrite the bodies it
 * holds): then built again from the log as the erasure left it, so that no value of the person
 * goes out after the erasure answered; null where its event no longer fires.
 */
async function bodyNow(deps: WorkerDeps, task: DeliveryTask): Promise<string | null> {
  const through = (await deps.queue?.erasedThrough?.(task.team)) ?? null;
  const seq = seqOfEnvelopeId(task.eventId);
  if (through === null || seq === null || seq / 10n >= through) return task.body;
  // The erasure's own event read first: a sealing layer (EventStoreDB's) lets go of an erased
  // person's key as it reads that event, so a process a moment behind the erasure does not build
  // the body again with the key it still holds.
  await teamEventAt(deps.log, task.team, { commit: through, prepare: through });
  return envelopeRebuilder(deps.log, task.team, ATTEMPT_LINK_WAIT_MS)(seq);
}

/**
 * How long an attempt waits for its event to be readable in its team's events (EventStoreDB's
 * links trail the append by a moment) before it fails, to be retried: an erasure's rewrite waits
 * 30 s, but an attempt holds one of the worker's slots meanwhile, and a retry comes anyway.
 */
const ATTEMPT_LINK_WAIT_MS = 2_000;

/**
 * The delivery pipeline for one task (svix-style): load the endpoint as it is now (a rotated
 * secret or a new URL applies to retries), wait for its throttle, sign, send, record the attempt,
 * then finish or schedule the retry (on the receiver's Retry-After where it gave one), disabling
 * an endpoint that is gone or has failed for too long.
 */
export async function attemptDelivery(deps: WorkerDeps, { task, attempt }: Lease): Promise<Attempted> {
  let body: string | null;
  try {
    body = await bodyNow(deps, task);
  } catch (err) {
    // The queue's record of erasures or the log out of reach: nothing is sent with what may be an
    // erased person's values; the attempt fails with the reason, recorded and retried as any
    // (and given up after the last), never itself a reason to disable the endpoint.
    return attemptBody(deps, task, attempt, `its body could not be checked against the team's erasures (${err instanceof Error ? err.message : String(err)})`);
  }
  // Its event no longer fires as the erasure left the log: nothing to send (as the embedded
  // queue's purge drops such a task).
  if (body === null) return { kind: 'done', delivered: false };
  if (body === task.body) return attemptBody(deps, task, attempt);
  // Built again: what goes out now, and what the queue keeps for a retry or a deferral.
  const outcome = await attemptBody(deps, { ...task, body }, attempt);
  return outcome.kind === 'done' ? outcome : { ...outcome, body };
}

/** `unsent`: why this attempt must send nothing (it fails with that reason, as a secret the main key does not open). */
async function attemptBody(deps: WorkerDeps, task: DeliveryTask, attempt: number, unsent?: string): Promise<Attempted> {
  const ep = await (deps.endpoints ?? new EndpointCache(deps.log)).current(task.endpointId);
  // A deleted endpoint takes its delivery log with it: nothing to send, nothing to record.
  if (!ep.exists || ep.deleted || ep.team !== task.team) return { kind: 'done', delivered: false };
  const clock = () => deps.now?.() ?? new Date();
  const stopped = !ep.active ? 'endpoint is inactive; delivery stopped' : queuedBeforeEnabled(task, ep.activeFrom) ? 'endpoint was disabled after this event; delivery stopped (a replay sends it)' : null;
  if (stopped) {
    const row = { ...pendingDelivery(task, attempt, null), attemptedAt: clock().toISOString() };
    deps.observe?.('abandoned', null);
    return { kind: 'done', delivered: false, written: deps.deliveries.record([{ ...row, status: 'abandoned', error: stopped }]) };
  }
  if (ep.maxPerSecond && deps.throttle) {
    const turn = await deps.throttle.admit(ep.id, ep.maxPerSecond);
    if (!turn.go) return { kind: 'defer', delayMs: turn.deferMs };
  }
  const now = clock();
  const row: Delivery = { ...pendingDelivery(task, attempt, null), attemptedAt: now.toISOString() };
  // The traceparent is made here, on the main thread, and handed to the sender (maybe on its own thread).
  const send = () =>
    deps.trace
      ? deps.trace.attempt(task.traceparent, { 'turnout.webhook.event_type': task.eventType, 'turnout.webhook.attempt': attempt }, (tp) => sendAttempt(deps.sender, deps.mainSealer, ep, task, row.id, now, tp))
      : sendAttempt(deps.sender, deps.mainSealer, ep, task, row.id, now);
  const r: SendResult | Unsent = unsent === undefined ? await send() : notSent(unsent);
  const attempted = { ...row, responseStatus: r.responseStatus, durationMs: r.durationMs, error: r.error };
  const seconds = r.durationMs / 1000;
  if (r.ok) {
    deps.observe?.('succeeded', seconds);
    return { kind: 'done', delivered: true, written: deps.deliveries.record([{ ...attempted, status: 'succeeded' }]) };
  }
  // The operator's to fix (the process's main key, or its queue or log), not the receiver's: said on every such
  // attempt, retried as any failure, and never a reason to disable the endpoint.
  if ('keyMismatch' in r) deps.report?.(`webhook ${task.eventType} ${task.eventId} to endpoint ${task.endpointId} ${r.error}`);
  // A test delivery, resent (decisions.md §12: not retried): its one attempt is its outcome, as
  // the test's own is; like the test's, a 410 Gone disables the endpoint (an endpoint that answers
  // it is set active: false), a run of failures does not (a ping is no delivery of the team's changes).
  if (task.eventType === PING) {
    deps.observe?.('failed', seconds);
    const written = deps.deliveries.record([{ ...attempted, status: 'failed' }]);
    if (r.responseStatus === 410 && deps.disable) await disableFor(deps, task, 'gone', r.error, ep.url);
    return { kind: 'done', delivered: false, written };
  }
  const disabled = !('keyMismatch' in r) && deps.disable && (await disableReason(deps, task, ep.activeSince, r.responseStatus, now, deps.disable.afterMs));
  if (disabled) {
    deps.observe?.('abandoned', seconds);
    await deps.deliveries.record([{ ...attempted, status: 'abandoned', error: `${r.error}; endpoint disabled (${disabled})` }]);
    // The attempt is recorded and final either way; a failed write is reported, and the next
    // failure of this endpoint tries again.
    await disableFor(deps, task, disabled, r.error, ep.url);
    return { kind: 'done', delivered: false };
  }
  if (!hasNextAttempt(deps.policy, attempt)) {
    deps.report?.(`webhook ${task.eventType} ${task.eventId} to endpoint ${task.endpointId} abandoned after ${attempt} attempts: ${r.error}`);
    deps.observe?.('abandoned', seconds);
    return { kind: 'done', delivered: false, written: deps.deliveries.record([{ ...attempted, status: 'abandoned' }]) };
  }
  deps.observe?.('failed', seconds);
  const delayMs = retryAfterMs(r.responseStatus, r.retryAfter, now.getTime() + r.durationMs, deps.policy.retryMaxMs) ?? retryDelayMs(deps.policy, attempt);
  const nextAt = new Date(now.getTime() + r.durationMs + delayMs).toISOString();
  const written = deps.deliveries.record([
    { ...attempted, status: 'failed', nextAttemptAt: nextAt },
    pendingDelivery(task, attempt + 1, nextAt),
  ]);
  return { kind: 'retry', delayMs, written };
}

/** Disables the task's endpoint; a failed write is reported, and the next failure of this endpoint tries again. */
function disableFor(deps: WorkerDeps, task: DeliveryTask, reason: DisabledReason, error: string | null, sentTo: string): Promise<void> {
  return deps.disable!.endpoint({ id: task.endpointId, team: task.team }, reason, sentTo).then(
    () => deps.report?.(`webhook endpoint ${task.endpointId} disabled (${reason}): ${error}`),
    (err) => deps.report?.(`webhook endpoint ${task.endpointId} could not be disabled: ${err instanceof Error ? err.message : String(err)}`),
  );
}

/**
 * Whether a live task's event was written before the endpoint was last made active: it was queued
 * while the endpoint was active before (the dispatcher matches endpoints as of the event), and a
 * disable since stopped it (integration-api §6.1: when off, delivery stops), which enabling again
 * does not undo (decisions.md §12: re-enabling does not resend by itself; a replay does). Told by
 * log positions, exactly: the envelope number over 10 is its event's. A replay's task and a resend's
 * are the operator's and still go out.
 */
function queuedBeforeEnabled(task: DeliveryTask, activeFrom: bigint | null): boolean {
  const seq = seqOfEnvelopeId(task.eventId);
  if (task.replay || seq === null || activeFrom === null) return false;
  const position = seq / 10n;
  return task.id === liveTaskId(position, task.eventType, task.endpointId) && position < activeFrom;
}

/**
 * decisions.md 12: `gone` on a 410; `failing` when every attempt since `afterMs` ago failed. A
 * re-enabled endpoint gets the whole period again: its run of failures is of the attempts made
 * since it was enabled, so it begins at the first of those to fail (not at the enable: after a
 * quiet spell longer than the period, one failure would disable it at once).
 */
async function disableReason(deps: WorkerDeps, task: DeliveryTask, activeSince: string | null, status: number | null, now: Date, afterMs: number): Promise<DisabledReason | null> {
  if (status === 410) return 'gone';
  const since = await deps.deliveries.failingSince(task.endpointId, activeSince ?? undefined);
  if (since === null) return null;
  return now.getTime() - Date.parse(since) >= afterMs ? 'failing' : null;
}

export function startWorker(given: WorkerDeps, concurrency = 64): Consumer {
  const deps = { ...given, endpoints: given.endpoints ?? new EndpointCache(given.log) };
  return deps.queue.consume(async (lease): Promise<Handled> => {
    const outcome = await attemptDelivery(deps, lease);
    const { replay, id } = lease.task;
    // A replay counts a task once its attempt is recorded (then the task's end commits on its own).
    if (outcome.kind === 'done' && replay && deps.settled) {
      await outcome.written;
      await deps.settled(replay, id, outcome.delivered);
    }
    return outcome;
  }, { concurrency });
}
