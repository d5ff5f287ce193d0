/**
 * The webhook event catalog of spec 6.2. Endpoints subscribe to these names or to ["*"], which
 * also covers types added to this list later (memberships and others, spec 9).
 */
export const WEBHOOK_TYPES = [
  'constituent.created',
  'constituent.updated',
  'constituent.deleted',
  'constituent.erased',
  'volunteer.created',
  'volunteer.updated',
  'volunteer.deleted',
  'volunteer_task.created',
  'volunteer_task.updated',
  'volunteer_task.deleted',
  'volunteer_task.signed_up',
  'volunteer_task.canceled',
  'volunteer_task.unassigned',
  'donation.created',
  'donation.updated',
  'donation.deleted',
  'donation.refunded',
  'donation.receipted',
  'donation.thanked',
  'donation.recurring_started',
  'donation.recurring_canceled',
  'event.created',
  'event.updated',
  'event.deleted',
] as const;

export type WebhookType = (typeof WEBHOOK_TYPES)[number];

export const ALL_TYPES = '*';

const KNOWN = new Set<string>(WEBHOOK_TYPES);
export const isWebhookType = (t: string): t is WebhookType => KNOWN.has(t);

/** Whether an endpoint's subscription list covers a type. */
export const subscribes = (events: readonly string[], type: string) => events.includes(ALL_TYPES) || events.includes(type);
