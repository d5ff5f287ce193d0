import { createHash } from 'node:crypto';
import { load } from '../eventlog/load.js';
import type { EventLog } from '../eventlog/port.js';
import { endpointEvolver, signingSecrets, webhookEndpointStream } from '../domain/webhook-endpoint/events.js';
import type { Delivery, DeliveryLog } from './deliveries.js';
import type { Consumer, DeliveryQueue, DeliveryTask, Lease, Outcome } from './queue/port.js';
import { hasNextAttempt, retryDelayMs, type RetryPolicy } from './retry.js';
import type { Sender } from './send.js';
import { signatureHeader, standardWebhookHeaders } from './sign.js';

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

/**
 * The headers of one attempt: Turnout's own (spec 6.3, 6.5) and, beside them, the Standard
 * Webhooks set (decisions.md 12), whose webhook-id is the envelope id; both signed with every
 * live secret, the newest first.
 */
export function deliveryHeaders(task: Pick<DeliveryTask, 'eventId' | 'eventType' | 'body'>, deliveryId: string, secrets: string[], now: Date): Record<string, string> {
  const t = Math.floor(now.getTime() / 1000);
  return {
    'X-Turnout-Event': task.eventType,
    'X-Turnout-Delivery': deliveryId,
    'X-Turnout-Signature': signatureHeader(task.body, secrets, t),
    ...standardWebhookHeaders(task.eventId, task.body, secrets, t),
  };
}

export interface WorkerDeps {
  log: EventLog;
  queue: DeliveryQueue;
  deliveries: DeliveryLog;
  sender: Sender;
  policy: RetryPolicy;
  now?: () => Date;
  report?: (message: string) => void;
}

/**
 * The delivery pipeline for one task (svix-style): load the endpoint as it is now (a rotated
 * secret or a new URL applies to retries), sign, send, record the attempt, then finish or
 * schedule the retry.
 */
export async function attemptDelivery(deps: WorkerDeps, { task, attempt }: Lease): Promise<Outcome> {
  const now = deps.now?.() ?? new Date();
  const { state: ep } = await load(deps.log, webhookEndpointStream(task.endpointId), endpointEvolver);
  const row: Delivery = { ...pendingDelivery(task, attempt, null), attemptedAt: now.toISOString() };
  // A deleted endpoint takes its delivery log with it: nothing to send, nothing to record.
  if (!ep.exists || ep.deleted || ep.team !== task.team) return { kind: 'done' };
  if (!ep.active) {
    await deps.deliveries.record([{ ...row, status: 'abandoned', error: 'endpoint is inactive; delivery stopped' }]);
    return { kind: 'done' };
  }
  const r = await deps.sender.send(ep.url, task.body, deliveryHeaders(task, row.id, signingSecrets(ep, now), now));
  const attempted = { ...row, responseStatus: r.responseStatus, durationMs: r.durationMs, error: r.error };
  if (r.ok) {
    await deps.deliveries.record([{ ...attempted, status: 'succeeded' }]);
    return { kind: 'done' };
  }
  if (!hasNextAttempt(deps.policy, attempt)) {
    await deps.deliveries.record([{ ...attempted, status: 'abandoned' }]);
    deps.report?.(`webhook ${task.eventType} ${task.eventId} to endpoint ${task.endpointId} abandoned after ${attempt} attempts: ${r.error}`);
    return { kind: 'done' };
  }
  const delayMs = retryDelayMs(deps.policy, attempt);
  const nextAt = new Date(now.getTime() + r.durationMs + delayMs).toISOString();
  await deps.deliveries.record([
    { ...attempted, status: 'failed', nextAttemptAt: nextAt },
    pendingDelivery(task, attempt + 1, nextAt),
  ]);
  return { kind: 'retry', delayMs };
}

export function startWorker(deps: WorkerDeps, concurrency = 64): Consumer {
  return deps.queue.consume((lease) => attemptDelivery(deps, lease), { concurrency });
}
