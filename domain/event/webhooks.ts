import { type Evolver, unknownEvent } from '../shared/events.js';
import { type Fires, fires, NONE } from '../shared/webhooks.js';
import { formReadValues } from './creation.js';
import { evolveEvent, eventEvolver, type EventEvent, type EventState, FORM_DEFAULTS_APPLIED, TEMPLATES_SEEDED } from './events.js';

/** decisions.md 7: event.updated fires only when one of these changed. */
export const EVENT_UPDATE_FIELDS = [
  'StartDate', 'EndDate', 'StartTime', 'EndTime', 'FkTimeZone',
  'EventLocation', 'EventLocationAddress', 'EventLocationCity', 'EventLocationState', 'EventLocationZipCode',
  'ContactName', 'ContactEmail', 'ContactPhone', 'MaxGuests', 'FkStatus', 'FkEventType',
];

/**
 * The event as its webhooks show it: the record plus the public-form flags (IsPublic,
 * IsTicketSales) that its creation applies, so payloads carry every API field (spec 6.2).
 */
export const eventWebhookEvolver: Evolver<EventState, EventEvent> = {
  initial: eventEvolver.initial,
  evolve: (s, e) => (e.type === FORM_DEFAULTS_APPLIED ? { ...s, fields: { ...s.fields, ...formReadValues(e.data.defaults) } } : evolveEvent(s, e)),
};

/**
 * The events appended in one write with an event of this type, and so part of its change: the
 * in-app Add Event appends its seeded templates and form defaults with EventCreated, and
 * event.created shows their result. Undefined when an event stands alone.
 */
export function appendedWith(e: EventEvent): ((other: { type: string }) => boolean) | undefined {
  return e.type === 'EventCreated' ? creationPart : undefined;
}

const creationPart = (e: { type: string }) => e.type === TEMPLATES_SEEDED || e.type === FORM_DEFAULTS_APPLIED;

const CREATED = fires('event.created');
const UPDATED = fires('event.updated');
const DELETED = fires('event.deleted', 'before');

/** An event without a title is a placeholder no one has heard of yet (spec 6.2). */
const titled = (s: EventState) => s.exists && typeof s.fields.EventTitle === 'string' && s.fields.EventTitle.trim() !== '';

/**
 * Spec 6.2 and decisions.md 7, over the states of eventWebhookEvolver (with `appendedWith`):
 * event.created fires once the event has a title (at its creation, or when a title is first
 * set); event.updated for a titled event when one of EVENT_UPDATE_FIELDS changed; event.deleted
 * only for a titled event, since cleaning up an untitled placeholder is no news.
 */
export function eventWebhooks(e: EventEvent, before: EventState, after: EventState): Fires {
  switch (e.type) {
    case 'EventDeleted':
      return titled(before) && !before.deleted ? DELETED : NONE;
    case 'EventCreated':
    case 'EventUpdated':
    case 'EventLocked':
    case 'EventUnlocked':
    case TEMPLATES_SEEDED:
    case FORM_DEFAULTS_APPLIED:
      return titledChange(before, after);
    default:
      return unknownEvent(e, NONE);
  }
}

function titledChange(before: EventState, after: EventState): Fires {
  if (!titled(after) || after.deleted) return NONE;
  if (!titled(before)) return CREATED;
  return EVENT_UPDATE_FIELDS.some((f) => (before.fields[f] ?? null) !== (after.fields[f] ?? null)) ? UPDATED : NONE;
}
