import type { Evolver } from '../domain/shared/events.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import { constituentEvolver } from '../domain/constituent/events.js';
import { DONATION, donationEvolver } from '../domain/donation/events.js';
import { formReadValues } from '../domain/event/creation.js';
import { EVENT, eventEvolver, type EventEvent, FORM_DEFAULTS_APPLIED, TEMPLATES_SEEDED } from '../domain/event/events.js';
import { RECURRING_GIFT, recurringGiftEvolver, type RecurringGiftState } from '../domain/recurring-gift/events.js';
import type { Values } from '../domain/shared/fields.js';
import type { RecordState } from '../domain/shared/record.js';
import { ASSIGNED, TASK, taskEvolver, UNASSIGNED } from '../domain/volunteer-task/events.js';
import { VOLUNTEER, volunteerEvolver } from '../domain/volunteer/events.js';
import type { WebhookType } from '../domain/webhook-endpoint/types.js';
import { AsOf } from './history.js';
import * as P from './payloads.js';

export { WEBHOOK_TYPES, type WebhookType } from '../domain/webhook-endpoint/types.js';

/** One webhook a domain event fires: its type and its `data`. */
export interface Mapped {
  type: WebhookType;
  data: Values;
}

type Mapper = (event: RecordedEvent, h: AsOf) => Promise<Mapped[]>;

const same = (a: Values, b: Values) => JSON.stringify(a) === JSON.stringify(b);
const titled = (s: RecordState) => s.exists && typeof s.fields.EventTitle === 'string' && s.fields.EventTitle.trim() !== '';

/**
 * The common rule of record aggregates: created on `<P>Created`, deleted on `<P>Deleted`, and
 * updated on any other event that changed a public field (status log entries of volunteers
 * included); locks and PATCHes that change nothing fire nothing.
 */
function recordMapper<S extends RecordState>(
  resource: 'constituent' | 'volunteer' | 'volunteer_task' | 'donation',
  prefix: string,
  evolver: Evolver<S>,
  data: (h: AsOf, s: S, e: RecordedEvent, stamp: P.Stamp) => Promise<Values> | Values,
  extra?: (e: RecordedEvent, h: AsOf, before: S, after: S) => Promise<Mapped[] | null>,
): Mapper {
  return async (e, h) => {
    if (!e.type.startsWith(prefix)) return [];
    const { before, after } = await h.around(e, evolver);
    const custom = extra ? await extra(e, h, before, after) : null;
    if (custom) return custom;
    if (e.type === `${prefix}Created`) return [{ type: `${resource}.created` as WebhookType, data: await data(h, after, e, 'created') }];
    if (e.type === `${prefix}Deleted`)
      return before.exists && !before.deleted ? [{ type: `${resource}.deleted` as WebhookType, data: await data(h, before, e, 'deleted') }] : [];
    if (!after.exists || after.deleted || same(before.fields, after.fields)) return [];
    return [{ type: `${resource}.updated` as WebhookType, data: await data(h, after, e, 'updated') }];
  };
}

/**
 * A task person-event (spec 6.4). Its volunteer_task.updated (decisions.md 7) comes from the
 * VolunteerTaskUpdated appended just before it, so the two webhooks have distinct envelope ids.
 */
async function taskPersonEvents(e: RecordedEvent, h: AsOf, _before: RecordState, after: RecordState): Promise<Mapped[] | null> {
  if (e.type !== ASSIGNED && e.type !== UNASSIGNED) return null;
  const kind: WebhookType =
    e.type === ASSIGNED ? 'volunteer_task.signed_up' : e.data.reason === 'canceled' ? 'volunteer_task.canceled' : 'volunteer_task.unassigned';
  return [{ type: kind, data: await P.taskPersonData(h, after, e.data.volunteerId, e) }];
}

/** Refunds are donations of their own and fire donation.refunded; receipt and thank-you flags their own types. */
async function donationEvents(e: RecordedEvent, _h: AsOf, before: RecordState, after: RecordState): Promise<Mapped[] | null> {
  switch (e.type) {
    case `${DONATION}Created`:
      return after.fields.FkRefundedDonation != null ? [{ type: 'donation.refunded', data: P.donationData(after, e, 'created') }] : null;
    case `${DONATION}Receipted`:
      return before.fields.IsReceipted === true ? [] : [{ type: 'donation.receipted', data: P.donationData(after, e, 'updated') }];
    case `${DONATION}Thanked`:
      return before.fields.IsThanked === true ? [] : [{ type: 'donation.thanked', data: P.donationData(after, e, 'updated') }];
    case `${DONATION}Refunded`:
      return []; // the refund donation's own event carries it
    default:
      return null;
  }
}

/** decisions.md 7: event.updated only for these; event.created only once a title exists. */
export const EVENT_UPDATE_FIELDS = [
  'StartDate', 'EndDate', 'StartTime', 'EndTime', 'FkTimeZone',
  'EventLocation', 'EventLocationAddress', 'EventLocationCity', 'EventLocationState', 'EventLocationZipCode',
  'ContactName', 'ContactEmail', 'ContactPhone', 'MaxGuests', 'FkStatus', 'FkEventType',
];

/**
 * The event as its reads show it: the record plus the public-form flags (IsPublic,
 * IsTicketSales) that its creation applies, so payloads carry every API field (spec 6.2).
 */
const eventPayloadEvolver: Evolver<RecordState, EventEvent> = {
  initial: eventEvolver.initial,
  evolve: (s, e) => {
    if (e.type !== FORM_DEFAULTS_APPLIED) return eventEvolver.evolve(s, e);
    return { ...s, fields: { ...s.fields, ...formReadValues(e.data.defaults) } };
  },
};

/** What the in-app Add Event appends with EventCreated: the same change, so event.created shows its result. */
const creationPart = (e: RecordedEvent) => e.type === TEMPLATES_SEEDED || e.type === FORM_DEFAULTS_APPLIED;

const eventMapper: Mapper = async (e, h) => {
  if (!e.type.startsWith(EVENT)) return [];
  const { before, after } = await h.around(e, eventPayloadEvolver, e.type === `${EVENT}Created` ? creationPart : undefined);
  if (e.type === `${EVENT}Deleted`)
    // Cleaning up an untitled placeholder is not an event anyone heard of.
    return titled(before) && !before.deleted ? [{ type: 'event.deleted', data: await P.eventData(h, before, e, 'deleted') }] : [];
  if (!titled(after) || after.deleted) return [];
  if (!titled(before)) return [{ type: 'event.created', data: await P.eventData(h, after, e, 'created') }];
  const changed = EVENT_UPDATE_FIELDS.some((f) => (before.fields[f] ?? null) !== (after.fields[f] ?? null));
  return changed ? [{ type: 'event.updated', data: await P.eventData(h, after, e, 'updated') }] : [];
};

const recurringMapper: Mapper = async (e, h) => {
  const { before, after } = await h.around(e, recurringGiftEvolver);
  if (e.type === `${RECURRING_GIFT}Created`) return [{ type: 'donation.recurring_started', data: P.recurringGiftData(after, e, 'created') }];
  if (e.type === `${RECURRING_GIFT}Canceled` && !(before as RecurringGiftState).canceledAt)
    return [{ type: 'donation.recurring_canceled', data: P.recurringGiftData(after, e, 'updated') }];
  return [];
};

/** Mappers by stream category. */
const MAPPERS: Record<string, Mapper> = {
  constituent: recordMapper('constituent', 'Constituent', constituentEvolver, (_h, s, e, st) => P.constituentData(s, e, st)),
  volunteer: recordMapper('volunteer', VOLUNTEER, volunteerEvolver, P.volunteerData),
  volunteer_task: recordMapper('volunteer_task', TASK, taskEvolver, P.taskData, taskPersonEvents),
  donation: recordMapper('donation', DONATION, donationEvolver, (_h, s, e, st) => P.donationData(s, e, st), donationEvents),
  recurring_gift: recurringMapper,
  event: eventMapper,
};

export const categoryOf = (stream: string) => stream.slice(0, Math.max(0, stream.lastIndexOf('-')));

/** The webhook types of each category start with this (recurring gifts fire donation types). */
const RESOURCE_OF: Record<string, string> = {
  constituent: 'constituent.',
  volunteer: 'volunteer.',
  volunteer_task: 'volunteer_task.',
  donation: 'donation.',
  recurring_gift: 'donation.',
  event: 'event.',
};

/** Whether an endpoint subscribed to `events` can receive anything a category's events fire. */
export function canReceive(category: string, events: readonly string[]): boolean {
  const resource = RESOURCE_OF[category];
  return resource !== undefined && events.some((t) => t === '*' || t.startsWith(resource));
}

/** Whether a log event could fire a webhook at all (cheap; no reads). */
export const mayFire = (e: RecordedEvent) => Boolean(e.metadata?.team) && categoryOf(e.stream) in MAPPERS;

/** The webhooks a domain event fires, with their payloads as of that event. */
export async function mapEvent(e: RecordedEvent, h: AsOf): Promise<Mapped[]> {
  const mapper = MAPPERS[categoryOf(e.stream)];
  return mapper ? mapper(e, h) : [];
}
