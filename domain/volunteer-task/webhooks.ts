import { unknownEvent } from '../shared/events.js';
import { changedRecord, deletedRecord, type Fires, fires, NONE, recordWebhooks } from '../shared/webhooks.js';
import { ASSIGNED, type TaskEvent, type TaskState, UNASSIGNED } from './events.js';

const TASK = recordWebhooks('volunteer_task.created', 'volunteer_task.updated', 'volunteer_task.deleted');
const SIGNED_UP = fires('volunteer_task.signed_up');
const CANCELED = fires('volunteer_task.canceled');
const UNASSIGNED_WEBHOOK = fires('volunteer_task.unassigned');

/**
 * The common record rule (domain/shared/webhooks.ts), and the person-events of spec 6.4: an
 * assignment fires signed_up (a reassignment too, for the new volunteer, with no unassigned for
 * the previous one: decisions.md 7); an unassignment fires canceled when the volunteer canceled,
 * unassigned otherwise (taken off, or their volunteer record deleted). A person-event fires only
 * that: its volunteer_task.updated comes from the VolunteerTaskUpdated appended just before it,
 * so the two webhooks have distinct envelope ids.
 */
export function taskWebhooks(e: TaskEvent, before: TaskState, after: TaskState): Fires {
  switch (e.type) {
    case 'VolunteerTaskCreated':
      return TASK.created;
    case 'VolunteerTaskDeleted':
      return deletedRecord(TASK, before);
    case 'VolunteerTaskUpdated':
    case 'VolunteerTaskLocked':
    case 'VolunteerTaskUnlocked':
      return changedRecord(TASK, before, after);
    case ASSIGNED:
      return SIGNED_UP;
    case UNASSIGNED:
      return e.data.reason === 'canceled' ? CANCELED : UNASSIGNED_WEBHOOK;
    default:
      return unknownEvent(e, NONE);
  }
}

/**
 * The events appended in one write with an event of this type, and so part of its change: a task
 * created with a volunteer is created, then assigned in the same append (decide.ts decideCreate),
 * and volunteer_task.created shows it assigned, as the API reads it after the write, so a
 * subscriber sees the record the creator was answered with. Undefined when an event stands alone.
 */
export function taskAppendedWith(e: TaskEvent): ((other: { type: string }) => boolean) | undefined {
  return e.type === 'VolunteerTaskCreated' ? assignmentPart : undefined;
}

const assignmentPart = (e: { type: string }) => e.type === 'VolunteerTaskUpdated' || e.type === ASSIGNED;
