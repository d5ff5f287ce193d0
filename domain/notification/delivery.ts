import { type DomainEvent, type Evolver, unknownEvent } from '../shared/events.js';

/**
 * The delivery record of one notification: stream `notification-<id>`, appended with the
 * expected revision, so two senders (or one sender after a restart) can never both hold it.
 *   NotificationClaimed {id, owner, leaseUntil}   a sender is about to hand it to the transport
 *   NotificationSent {id}                         the transport accepted it: never sent again
 *   NotificationAttemptFailed {id, error, attempt, retryAt}  the transport refused it; released
 *   NotificationFailed {id, error}                given up (attempts spent, or delivery unknown)
 */
export type DeliveryStatus = 'open' | 'claimed' | 'sent' | 'failed';

export interface DeliveryState {
  status: DeliveryStatus;
  attempts: number;
  owner: string | null;
  leaseUntil: number;
  retryAt: number;
}

export const notificationStream = (id: string) => `notification-${id}`;

export type NotificationEvent =
  | DomainEvent<'NotificationClaimed', { id: string; owner: string; leaseUntil: string }>
  | DomainEvent<'NotificationSent', { id: string; recovered?: boolean }>
  | DomainEvent<'NotificationAttemptFailed', { id: string; error: string; attempt: number; retryAt: string }>
  | DomainEvent<'NotificationFailed', { id: string; error: string }>;

export const deliveryEvolver: Evolver<DeliveryState, NotificationEvent> = {
  initial: () => ({ status: 'open', attempts: 0, owner: null, leaseUntil: 0, retryAt: 0 }),
  evolve(s, e) {
    switch (e.type) {
      case 'NotificationClaimed':
        return { ...s, status: 'claimed', owner: e.data.owner, leaseUntil: Date.parse(e.data.leaseUntil) };
      case 'NotificationSent':
        return { ...s, status: 'sent' };
      case 'NotificationAttemptFailed':
        return { ...s, status: 'open', owner: null, attempts: e.data.attempt, retryAt: Date.parse(e.data.retryAt) };
      case 'NotificationFailed':
        return { ...s, status: 'failed' };
      default:
        return unknownEvent(e, s);
    }
  },
};

export function decideClaim(s: DeliveryState, c: { id: string; owner: string; now: Date; leaseMs: number }): NotificationEvent[] {
  if (s.status !== 'open' || s.retryAt > c.now.getTime()) return [];
  return [{ type: 'NotificationClaimed', data: { id: c.id, owner: c.owner, leaseUntil: new Date(c.now.getTime() + c.leaseMs).toISOString() } }];
}

/**
 * After a refused attempt: retry after `retryInMs` (the caller's back-off for this attempt,
 * `attempt` being the number of attempts made) until the attempts are spent.
 */
export function decideAttemptFailed(s: DeliveryState, c: { id: string; error: string; now: Date; maxAttempts: number; retryInMs: (attempt: number) => number }): NotificationEvent[] {
  const attempt = s.attempts + 1;
  if (attempt >= c.maxAttempts) return [{ type: 'NotificationFailed', data: { id: c.id, error: c.error } }];
  const retryAt = new Date(c.now.getTime() + c.retryInMs(attempt)).toISOString();
  return [{ type: 'NotificationAttemptFailed', data: { id: c.id, error: c.error, attempt, retryAt } }];
}
