import { Type } from '@sinclair/typebox';
import { TASK_GROUP_FIELDS } from '../../domain/task-group/events.js';
import { ListOf, Nullable, One, Paging, Query } from './common.js';
import { readRecord, writeBody } from '../../validation/fields.js';

const props = readRecord('PkTaskGroup', TASK_GROUP_FIELDS, { DistrictName: Nullable(Type.String()), PrecinctName: Nullable(Type.String()) }).properties;
export const TaskGroup = Type.Object(props, { $id: 'VolunteerTaskGroup' });
export const TaskGroupRef = Type.Ref(TaskGroup);
export const TaskGroupPlain = Type.Object(props);

export const CreateTaskGroupBody = writeBody(TASK_GROUP_FIELDS, ['TaskGroupTitle']);
export const TaskGroupListQuery = Query({ search: Type.Optional(Type.String({ description: 'Title, location name or id' })), ...Paging });

export const TaskGroupOne = One('volunteerTaskGroup', TaskGroupRef);
export const TaskGroupCreatedPlain = One('volunteerTaskGroup', TaskGroupPlain);
export const TaskGroupList = ListOf('volunteerTaskGroups', TaskGroupRef);
