import { type Evolver, type Folded, unknownEvent } from '../shared/events.js';
import { normaliseFields, requireText, type FieldSpec, type Values } from '../shared/fields.js';
import { emptyRecord, recordCreated, type RecordEvents, type RecordState } from '../shared/record.js';

/**
 * Task groups (spec 2.4) are read-only in the public API and created in the application:
 * VolunteerTaskGroupCreated {id, fields}. The state is the common record.
 */
export const TASK_GROUP = 'VolunteerTaskGroup';
export type TaskGroupEvent = Extract<RecordEvents<typeof TASK_GROUP>, { type: 'VolunteerTaskGroupCreated' }>;
export type TaskGroupState = RecordState;

export function evolveTaskGroup(s: TaskGroupState, e: Folded<TaskGroupEvent>): TaskGroupState {
  switch (e.type) {
    case 'VolunteerTaskGroupCreated':
      return recordCreated(s, e);
    default:
      return unknownEvent(e.type, s);
  }
}

export const taskGroupEvolver: Evolver<TaskGroupState, TaskGroupEvent> = { initial: emptyRecord, evolve: evolveTaskGroup };
/** The stream category, as domain/resources.ts registers it: record 12's stream is `volunteer_task_group-12`. */
export const TASK_GROUP_CATEGORY = 'volunteer_task_group';
export const taskGroupStream = (id: number) => `${TASK_GROUP_CATEGORY}-${id}`;

export const TASK_GROUP_FIELDS: FieldSpec = {
  TaskGroupTitle: { kind: 'string', max: 500, nullable: false },
  GroupLocationName: { kind: 'string', max: 500 },
  FkDistrict: { kind: 'ref' },
  FkPrecinct: { kind: 'ref' },
};

export function validateCreateGroup(body: Values): Values {
  const fields = normaliseFields(TASK_GROUP_FIELDS, body);
  requireText(fields, 'TaskGroupTitle', 'TaskGroupTitle is required and cannot be empty.');
  return { GroupLocationName: null, FkDistrict: null, FkPrecinct: null, ...fields };
}

export function decideCreateGroup(cmd: { id: number; body: Values }, state: TaskGroupState): TaskGroupEvent[] {
  if (state.exists) throw new Error(`task group ${cmd.id} already exists`);
  return [{ type: 'VolunteerTaskGroupCreated', data: { id: cmd.id, fields: validateCreateGroup(cmd.body) } }];
}
