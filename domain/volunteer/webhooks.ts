import { unknownEvent } from '../shared/events.js';
import { ALONE, changedRecord, deletedRecord, type Fires, NONE, recordWebhooks, type WriteOf } from '../shared/webhooks.js';
import type { VolunteerEvent, VolunteerState } from './events.js';

const VOLUNTEER = recordWebhooks('volunteer.created', 'volunteer.updated', 'volunteer.deleted');

/** The events a volunteer's PATCH stores in one write: its field changes, then one entry per status move (decide.ts). */
const UPDATE_PARTS: ReadonlySet<string> = new Set([
  'VolunteerUpdated',
  'VolunteerLocked',
  'VolunteerUnlocked',
  'VolunteerDeactivated',
  'VolunteerReactivated',
  'VolunteerSuspended',
  'VolunteerSuspensionLifted',
]);
const isUpdatePart = (e: { type: string }) => UPDATE_PARTS.has(e.type);

/**
 * Spec 6.2: the common record rule (domain/shared/webhooks.ts); a status or suspension entry is an
 * update. A PATCH that edits fields and moves the status stores several events in one write, and
 * fires one volunteer.updated for it (one write, one revision: decisions.md 7), from the write's
 * first event, showing the volunteer as the whole write left it (`volunteerAppendedWith`): an
 * updated for each event would show states the volunteer never had, all with the same version.
 */
export function volunteerWebhooks(e: VolunteerEvent, before: VolunteerState, after: VolunteerState, write: WriteOf = ALONE): Fires {
  switch (e.type) {
    case 'VolunteerCreated':
      return VOLUNTEER.created;
    case 'VolunteerDeleted':
      return deletedRecord(VOLUNTEER, before);
    case 'VolunteerUpdated':
    case 'VolunteerLocked':
    case 'VolunteerUnlocked':
    case 'VolunteerDeactivated':
    case 'VolunteerReactivated':
    case 'VolunteerSuspended':
    case 'VolunteerSuspensionLifted':
      return write.opens ? changedRecord(VOLUNTEER, before, after) : NONE;
    default:
      return unknownEvent(e, NONE);
  }
}

/** The events stored in one write with an update, and so part of its change (volunteerWebhooks). */
export function volunteerAppendedWith(e: VolunteerEvent): ((other: { type: string }) => boolean) | undefined {
  return isUpdatePart(e) ? isUpdatePart : undefined;
}
