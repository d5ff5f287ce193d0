import { Type } from '@sinclair/typebox';
import { TASK_FIELDS, TASK_GEOGRAPHY_FIELDS } from '../../domain/volunteer-task/rules.js';
import { Body, Created, ListOf, Nullable, One, Paging, Query } from './common.js';
import { readRecord, writeBody } from '../../validation/fields.js';
export { CreateTaskBody } from '../../validation/bodies.js';

const derived = {
  NumberOfHours: Nullable(Type.Number({ description: '(end - start) in hours, 2 decimals; null unless both are set' })),
  FkDistrict: Nullable(Type.Integer()),
  DistrictName: Nullable(Type.String()),
  FkPrecinct: Nullable(Type.Integer()),
  PrecinctName: Nullable(Type.String()),
  VolunteerName: Nullable(Type.String({ description: 'The assigned volunteer; null together with VolunteerEmail and VolunteerPhone when unassigned' })),
  VolunteerEmail: Nullable(Type.String()),
  VolunteerPhone: Nullable(Type.String()),
  TaskGroupTitle: Nullable(Type.String()),
};

const props = readRecord('PkTask', TASK_FIELDS, derived).properties;
export const VolunteerTask = Type.Object(props, { $id: 'VolunteerTask' });
export const VolunteerTaskRef = Type.Ref(VolunteerTask);
/** The same record for the application surface, which has its own schema registry. */
export const VolunteerTaskPlain = Type.Object(props);

export const UpdateTaskBody = writeBody(TASK_FIELDS);
export const GeographyBody = writeBody(TASK_GEOGRAPHY_FIELDS);
export const SignUpBody = Body({ FkVolunteer: Type.Integer({ minimum: 1, description: 'The volunteer signing up' }) });
export const CancelBody = Body({ FkVolunteer: Type.Optional(Type.Integer({ minimum: 1, description: 'The volunteer canceling; refused if another holds the task' })) });

export const PatchQuery = Query({
  ifOpen: Type.Optional(Type.Boolean({ description: 'With FkVolunteer: assign only if the task is still unassigned, else 409 not_open' })),
});

export const TaskListQuery = Query({
  search: Type.Optional(Type.String({ description: 'Title, description, contact, location, volunteer name, or id' })),
  isComplete: Type.Optional(Type.Boolean()),
  volunteerId: Type.Optional(Type.Integer({ minimum: 1 })),
  taskGroupId: Type.Optional(Type.Integer({ minimum: 1 })),
  ...Paging,
});

export const TaskCreated = Created('volunteerTask', VolunteerTaskRef);
export const TaskOne = One('volunteerTask', VolunteerTaskRef);
export const TaskOnePlain = One('volunteerTask', VolunteerTaskPlain);
export const TaskList = ListOf('volunteerTasks', VolunteerTaskRef, { totalHours: Type.Number({ description: 'NumberOfHours summed over the whole filtered set' }) });
