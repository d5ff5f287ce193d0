import { unknownEvent } from '../shared/events.js';
import { changedRecord, deletedRecord, type Fires, NONE, recordWebhooks } from '../shared/webhooks.js';
import type { VolunteerEvent, VolunteerState } from './events.js';

const VOLUNTEER = recordWebhooks('volunteer.created', 'volunteer.updated', 'volunteer.deleted');

/** Spec 6.2: the common record rule (domain/shared/webhooks.ts); a status or suspension entry is an update. */
export function volunteerWebhooks(e: VolunteerEvent, before: VolunteerState, after: VolunteerState): Fires {
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
      return changedRecord(VOLUNTEER, before, after);
    default:
      return unknownEvent(e, NONE);
  }
}
