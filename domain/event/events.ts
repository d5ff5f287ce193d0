import type { Evolver } from '../shared/events.js';
import { type RecordState, recordEvolver } from '../shared/record.js';

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
export const TEMPLATES_SEEDED = `${EVENT}NotificationTemplatesSeeded`;
export const FORM_DEFAULTS_APPLIED = `${EVENT}PublicFormDefaultsApplied`;

export type EventState = RecordState;
export const eventEvolver: Evolver<EventState> = recordEvolver(EVENT);
export const eventStream = (id: number) => `${EVENT_CATEGORY}-${id}`;
