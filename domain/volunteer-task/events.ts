import { type DomainEvent, type Evolver, type Folded, unknownEvent } from '../shared/events.js';
import { emptyRecord, recordCreated, recordDeleted, recordFieldsSet, recordLocked, recordUpdated, type RecordEvents, type RecordState } from '../shared/record.js';

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
export const ASSIGNED = 'VolunteerTaskAssigned';
export const UNASSIGNED = 'VolunteerTaskUnassigned';
export type AssignVia = 'api' | 'signup' | 'application';
export type UnassignReason = 'unassigned' | 'canceled' | 'volunteer_deleted';

export type TaskAssigned = DomainEvent<
  typeof ASSIGNED,
  { id: number; volunteerId: number; previousVolunteerId: number | null; via: AssignVia; DateAssigned: string }
>;
export type TaskUnassigned = DomainEvent<typeof UNASSIGNED, { id: number; volunteerId: number; reason: UnassignReason }>;
export type TaskPersonEvent = TaskAssigned | TaskUnassigned;
export type TaskEvent = RecordEvents<typeof TASK> | TaskPersonEvent;
export type TaskState = RecordState;

/** The stream category, as domain/resources.ts registers it: record 12's stream is `volunteer_task-12`. */
export const TASK_CATEGORY = 'volunteer_task';
export const taskStream = (id: number) => `${TASK_CATEGORY}-${id}`;
export const isAssignmentEvent = (type: string) => type === ASSIGNED || type === UNASSIGNED;

/** DateAssigned describes the current assignment, so it goes with it. */
const UNASSIGNED_FIELDS = { FkVolunteer: null, DateAssigned: null };

export function evolveTask(state: TaskState, e: Folded<TaskEvent>): TaskState {
  switch (e.type) {
    case 'VolunteerTaskCreated':
      return recordCreated(state, e);
    case 'VolunteerTaskUpdated':
      return recordUpdated(state, e);
    case 'VolunteerTaskLocked':
      return recordLocked(state, true);
    case 'VolunteerTaskUnlocked':
      return recordLocked(state, false);
    case 'VolunteerTaskDeleted':
      return recordDeleted(state, e);
    case ASSIGNED:
      return recordFieldsSet(state, { FkVolunteer: e.data.volunteerId, DateAssigned: e.data.DateAssigned }, e);
    case UNASSIGNED:
      return recordFieldsSet(state, UNASSIGNED_FIELDS, e);
    default:
      return unknownEvent(e, state);
  }
}

export const taskEvolver: Evolver<TaskState, TaskEvent> = { initial: emptyRecord, evolve: evolveTask };
