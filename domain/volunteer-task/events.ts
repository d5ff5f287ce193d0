import type { Evolver } from '../shared/events.js';
import { type RecordEvent, type RecordState, emptyRecord, evolveRecord } from '../shared/record.js';

/**
 * Volunteer task events. The common record events (VolunteerTaskCreated {id, fields},
 * VolunteerTaskUpdated {id, changes}, Locked, Unlocked, Deleted) and the assignment person-events
 * the webhook dispatcher reads, in exactly these shapes:
 *   VolunteerTaskAssigned {id, volunteerId, previousVolunteerId (number|null), via ('api'|'signup'|'application'), DateAssigned}
 *   VolunteerTaskUnassigned {id, volunteerId, reason ('unassigned'|'canceled'|'volunteer_deleted')}
 * A change of volunteer is appended as VolunteerTaskUpdated {changes: {FkVolunteer, DateAssigned}}
 * followed by its person-event, which carries the same values again (folding it is idempotent).
 * A reassignment is one Assigned event with previousVolunteerId set: the audit trail of who held
 * the task before, with no unassigned webhook for the previous volunteer (decisions.md 7).
 */
export const TASK = 'VolunteerTask';
export const ASSIGNED = `${TASK}Assigned`;
export const UNASSIGNED = `${TASK}Unassigned`;
export type AssignVia = 'api' | 'signup' | 'application';
export type UnassignReason = 'unassigned' | 'canceled' | 'volunteer_deleted';
export type TaskState = RecordState;

export const taskStream = (id: number) => `volunteer_task-${id}`;
export const isAssignmentEvent = (type: string) => type === ASSIGNED || type === UNASSIGNED;

export function evolveTask(state: TaskState, event: RecordEvent): TaskState {
  const at = event.metadata?.at ?? state.modifiedAt;
  switch (event.type) {
    case ASSIGNED:
      return { ...state, fields: { ...state.fields, FkVolunteer: event.data.volunteerId, DateAssigned: event.data.DateAssigned }, modifiedAt: at };
    case UNASSIGNED:
      // DateAssigned describes the current assignment, so it goes with it.
      return { ...state, fields: { ...state.fields, FkVolunteer: null, DateAssigned: null }, modifiedAt: at };
    default:
      return evolveRecord(TASK, state, event);
  }
}

export const taskEvolver: Evolver<TaskState> = {
  initial: emptyRecord,
  evolve: (s, e) => evolveTask(s, e as RecordEvent),
};
