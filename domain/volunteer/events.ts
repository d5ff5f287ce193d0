import { type DomainEvent, type Evolver, type Folded, unknownEvent } from '../shared/events.js';
import type { Values } from '../shared/fields.js';
import { emptyRecord, recordCreated, recordDeleted, recordFieldsSet, recordLocked, recordUpdated, type RecordEvents, type RecordState } from '../shared/record.js';

/**
 * Volunteer events: the common record events (VolunteerCreated {id, fields}, VolunteerUpdated
 * {id, changes}, Locked, Unlocked, Deleted) plus the status and suspension log entries of spec 3,
 * each carrying its dates:
 *   VolunteerDeactivated {id, InactiveDate}          VolunteerReactivated {id, ActiveDate}
 *   VolunteerSuspended {id, SuspensionStartDate, SuspensionEndDate}
 *   VolunteerSuspensionLifted {id, SuspensionEndDate}
 * On the constituent's claim stream (commands/volunteers.ts): VolunteerConstituentClaimed {volunteerId, constituentId}.
 */
export const VOLUNTEER = 'Volunteer';
export type VolunteerStatusEvent =
  | DomainEvent<'VolunteerDeactivated', { id: number; InactiveDate: unknown }>
  | DomainEvent<'VolunteerReactivated', { id: number; ActiveDate: unknown }>
  | DomainEvent<'VolunteerSuspended', { id: number; SuspensionStartDate: unknown; SuspensionEndDate: unknown }>
  | DomainEvent<'VolunteerSuspensionLifted', { id: number; SuspensionEndDate: unknown }>;
export type VolunteerEvent = RecordEvents<typeof VOLUNTEER> | VolunteerStatusEvent;
export type VolunteerConstituentClaimed = DomainEvent<'VolunteerConstituentClaimed', { volunteerId: number; constituentId: number }>;
export type VolunteerState = RecordState;
/** The stream category, as domain/resources.ts registers it: record 12's stream is `volunteer-12`. */
export const VOLUNTEER_CATEGORY = 'volunteer';
export const volunteerStream = (id: number) => `${VOLUNTEER_CATEGORY}-${id}`;
/** One claim stream per constituent keeps "at most one volunteer each" under concurrency. */
export const volunteerClaimStream = (constituentId: number) => `volunteer_constituent-${constituentId}`;

/** The fields a status event sets, so the aggregate and the read model fold it the same way. */
export function statusEventFields(e: VolunteerStatusEvent): Values {
  switch (e.type) {
    case 'VolunteerDeactivated':
      return { IsActive: false, InactiveDate: e.data.InactiveDate };
    case 'VolunteerReactivated':
      return { IsActive: true, ActiveDate: e.data.ActiveDate };
    case 'VolunteerSuspended':
      return { IsSuspended: true, SuspensionStartDate: e.data.SuspensionStartDate, SuspensionEndDate: e.data.SuspensionEndDate };
    case 'VolunteerSuspensionLifted':
      return { IsSuspended: false, SuspensionEndDate: e.data.SuspensionEndDate };
    default:
      return unknownEvent(e, {});
  }
}

export function evolveVolunteer(state: VolunteerState, e: Folded<VolunteerEvent>): VolunteerState {
  switch (e.type) {
    case 'VolunteerCreated':
      return recordCreated(state, e);
    case 'VolunteerUpdated':
      return recordUpdated(state, e);
    case 'VolunteerLocked':
      return recordLocked(state, true);
    case 'VolunteerUnlocked':
      return recordLocked(state, false);
    case 'VolunteerDeleted':
      return recordDeleted(state, e);
    case 'VolunteerDeactivated':
    case 'VolunteerReactivated':
    case 'VolunteerSuspended':
    case 'VolunteerSuspensionLifted':
      return recordFieldsSet(state, statusEventFields(e), e);
    default:
      return unknownEvent(e, state);
  }
}

export const volunteerEvolver: Evolver<VolunteerState, VolunteerEvent> = { initial: emptyRecord, evolve: evolveVolunteer };
