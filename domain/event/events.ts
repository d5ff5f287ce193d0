import { type DomainEvent, type Evolver, type Folded, unknownEvent } from '../shared/events.js';
import { emptyRecord, recordCreated, recordDeleted, recordLocked, recordUpdated, type RecordEvents, type RecordState } from '../shared/record.js';
import type { NotificationTemplate, PublicFormDefaults } from './creation.js';

/**
 * Event (the gathering) events, on stream `event-<id>`:
 * - EventCreated {id, fields}, EventUpdated {id, changes}, EventLocked/Unlocked/Deleted {id}
 *   (the common record events, domain/shared/record.ts);
 * - EventNotificationTemplatesSeeded {id, templates} and EventPublicFormDefaultsApplied {id, defaults},
 *   appended with EventCreated, as the in-app Add Event does (spec 2.5, creation behaviour).
 * Geography set through the application surface is an EventUpdated whose changes hold only
 * geography fields.
 */
export const EVENT = 'Event';
export const EVENT_CATEGORY = 'event';
export const TEMPLATES_SEEDED = 'EventNotificationTemplatesSeeded';
export const FORM_DEFAULTS_APPLIED = 'EventPublicFormDefaultsApplied';

export type EventEvent =
  | RecordEvents<typeof EVENT>
  | DomainEvent<typeof TEMPLATES_SEEDED, { id: number; templates: NotificationTemplate[] }>
  | DomainEvent<typeof FORM_DEFAULTS_APPLIED, { id: number; defaults: PublicFormDefaults }>;

export type EventState = RecordState;

/** The seeded templates and the form design are history only: the event's state is its record. */
export function evolveEvent(s: EventState, e: Folded<EventEvent>): EventState {
  switch (e.type) {
    case 'EventCreated':
      return recordCreated(s, e);
    case 'EventUpdated':
      return recordUpdated(s, e);
    case 'EventLocked':
      return recordLocked(s, true);
    case 'EventUnlocked':
      return recordLocked(s, false);
    case 'EventDeleted':
      return recordDeleted(s, e);
    case TEMPLATES_SEEDED:
    case FORM_DEFAULTS_APPLIED:
      return s;
    default:
      return unknownEvent(e, s);
  }
}

export const eventEvolver: Evolver<EventState, EventEvent> = { initial: emptyRecord, evolve: evolveEvent };
export const eventStream = (id: number) => `${EVENT_CATEGORY}-${id}`;
