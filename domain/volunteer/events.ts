import type { Evolver } from '../shared/events.js';
import { type RecordEvent, type RecordState, emptyRecord, evolveRecord } from '../shared/record.js';

/**
 * Volunteer events: the common record events (VolunteerCreated {id, fields}, VolunteerUpdated
 * {id, changes}, Locked, Unlocked, Deleted) plus the status and suspension log entries of spec 3,
 * each carrying its dates:
 *   VolunteerDeactivated {id, InactiveDate}          VolunteerReactivated {id, ActiveDate}
 *   VolunteerSuspended {id, SuspensionStartDate, SuspensionEndDate}
 *   VolunteerSuspensionLifted {id, SuspensionEndDate}
 */
export const VOLUNTEER = 'Volunteer';
export type VolunteerState = RecordState;
export const volunteerStream = (id: number) => `volunteer-${id}`;
/** One claim stream per constituent keeps "at most one volunteer each" under concurrency. */
export const volunteerClaimStream = (constituentId: number) => `volunteer_constituent-${constituentId}`;

/** The fields a status event sets, so the aggregate and the read model fold it the same way. */
export function statusEventFields(type: string, data: Record<string, unknown>): Record<string, unknown> | null {
  switch (type) {
    case `${VOLUNTEER}Deactivated`:
      return { IsActive: false, InactiveDate: data.InactiveDate };
    case `${VOLUNTEER}Reactivated`:
      return { IsActive: true, ActiveDate: data.ActiveDate };
    case `${VOLUNTEER}Suspended`:
      return { IsSuspended: true, SuspensionStartDate: data.SuspensionStartDate, SuspensionEndDate: data.SuspensionEndDate };
    case `${VOLUNTEER}SuspensionLifted`:
      return { IsSuspended: false, SuspensionEndDate: data.SuspensionEndDate };
    default:
      return null;
  }
}

export function evolveVolunteer(state: VolunteerState, event: RecordEvent): VolunteerState {
  const set = statusEventFields(event.type, event.data);
  if (set) return { ...state, fields: { ...state.fields, ...set }, modifiedAt: event.metadata?.at ?? state.modifiedAt };
  return evolveRecord(VOLUNTEER, state, event);
}

export const volunteerEvolver: Evolver<VolunteerState> = {
  initial: emptyRecord,
  evolve: (s, e) => evolveVolunteer(s, e as RecordEvent),
};
