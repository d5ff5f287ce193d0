import { unknownEvent } from '../shared/events.js';
import { ALONE, changedRecord, deletedRecord, type Fires, fires, NONE, recordWebhooks, type WriteOf } from '../shared/webhooks.js';
import { ASSIGNED, isAssignmentEvent, type TaskEvent, type TaskState, UNASSIGNED } from './events.js';

const TASK = recordWebhooks('volunteer_task.created', 'volunteer_task.updated', 'volunteer_task.deleted');
/**
 * A person-event fires its person webhook, then the volunteer_task.updated that accompanies it,
 * both showing the task after the change: decisions.md 7 numbers the two envelopes by the
 * person-event's position, 0 for its own type and 1 for `updated`.
 */
const SIGNED_UP = Object.freeze([...fires('volunteer_task.signed_up'), ...TASK.updated]);
const CANCELED = Object.freeze([...fires('volunteer_task.canceled'), ...TASK.updated]);
const UNASSIGNED_WEBHOOK = Object.freeze([...fires('volunteer_task.unassigned'), ...TASK.updated]);
const PERSON_WEBHOOKS: ReadonlySet<string> = new Set(['volunteer_task.signed_up', 'volunteer_task.canceled', 'volunteer_task.unassigned']);

/** Whether a webhook type is one of spec 6.4's person-events, whose data has that section's shape. */
export const isPersonWebhook = (type: string): boolean => PERSON_WEBHOOKS.has(type);

const isPersonEvent = (e: { type: string }) => isAssignmentEvent(e.type);

/**
 * The common record rule (domain/shared/webhooks.ts), and the person-events of spec 6.4: an
 * assignment fires signed_up (a reassignment too, for the new volunteer, with no unassigned for
 * the previous one: decisions.md 7); an unassignment fires canceled when the volunteer canceled,
 * unassigned otherwise (taken off, or their volunteer record deleted); each also fires
 * volunteer_task.updated. A change of volunteer is stored as a VolunteerTaskUpdated followed in
 * the same write by its person-event (decide.ts withFieldChange): that update fires nothing of its
 * own (the person-event `write.joined` names fires the write's `updated`), so the write's
 * two webhooks share the person-event's position, as decisions.md 7 numbers them.
 */
export function taskWebhooks(e: TaskEvent, before: TaskState, after: TaskState, write: WriteOf = ALONE): Fires {
  switch (e.type) {
    case 'VolunteerTaskCreated':
      return TASK.created;
    case 'VolunteerTaskDeleted':
      return deletedRecord(TASK, before);
    case 'VolunteerTaskUpdated':
      return write.joined.some(isPersonEvent) ? NONE : changedRecord(TASK, before, after);
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
  if (e.type === 'VolunteerTaskCreated') return assignmentPart;
  // An update followed by its person-event in one write (taskWebhooks): the rules look for it.
  if (e.type === 'VolunteerTaskUpdated') return isPersonEvent;
  return undefined;
}

const assignmentPart = (e: { type: string }) => e.type === 'VolunteerTaskUpdated' || e.type === ASSIGNED;
