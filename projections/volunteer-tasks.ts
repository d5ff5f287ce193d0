import { RESOURCES } from '../domain/resources.js';
import { inCategory } from '../domain/events.js';
import { unknownEvent } from '../domain/shared/events.js';
import { TASK_VOLUNTEER_FIELDS, taskVolunteerFields } from '../domain/volunteer-task/linked.js';
import { TASK_DERIVED, TASK_FIELDS, numberOfHours } from '../domain/volunteer-task/rules.js';
import { geographyNames } from './lookups.js';
import { copiedChanges, recordProjection, REMOVED } from './records.js';
import type { Projector } from './engine/projector.js';
import { and, type Doc, eq, type Query, searchFilter, type SortKey } from './store/port.js';
import { TASK_GROUPS } from './task-groups.js';
import { VOLUNTEERS } from './volunteers.js';

export const VOLUNTEER_TASKS = 'volunteerTasks';

/** Searched over title, description, contact, location and volunteer name (spec 4.3). */
const TASK_SEARCH_FIELDS = [
  'VolunteerTaskTitle',
  'VolunteerTaskDescription',
  'ContactName',
  'ContactEmail',
  'DeliveryLocationName',
  'DeliveryLocationAddress',
  'DeliveryLocationCity',
  'VolunteerName',
];

/** Ordered by start, nulls last, then id (decisions.md 5). */
const TASK_ORDER: SortKey[] = [
  { field: 'TaskStartDateTime', dir: 'asc', nulls: 'last' },
  { field: 'PkTask', dir: 'asc' },
];

/** The assigned volunteer as a task read shows them: all null together when unassigned (spec 2.3). */
function volunteerFields(v: Doc | null): Doc {
  return {
    ...taskVolunteerFields(v),
    _volunteerConstituent: v?.FkConstituent ?? null,
  };
}

const base = recordProjection({
  category: RESOURCES.volunteerTask.category,
  version: 2,
  revisions: true,
  collection: {
    name: VOLUNTEER_TASKS,
    idField: RESOURCES.volunteerTask.idField,
    indexes: [['FkTeam'], ['FkTeam', 'FkVolunteer'], ['FkTeam', 'FkTaskGroup'], ['_volunteerConstituent']],
    sorts: [{ where: ['FkTeam'], sort: TASK_ORDER }],
    search: [{ fields: TASK_SEARCH_FIELDS, where: ['FkTeam'], sort: TASK_ORDER }],
  },
  fields: [...Object.keys(TASK_FIELDS), ...TASK_DERIVED],
  derive: async (doc, store) => {
    const volunteer = doc.FkVolunteer ? await store.get<Doc>(VOLUNTEERS, doc.FkVolunteer as number) : null;
    const group = doc.FkTaskGroup ? await store.get<Doc>(TASK_GROUPS, doc.FkTaskGroup as number) : null;
    return {
      NumberOfHours: numberOfHours(doc),
      ...volunteerFields(volunteer),
      TaskGroupTitle: group?.TaskGroupTitle ?? null,
      ...(await geographyNames(store, doc)),
    };
  },
  change(e, current, docs) {
    switch (e.type) {
      case 'VolunteerTaskCreated':
        return docs.created(e.data.fields);
      case 'VolunteerTaskUpdated':
        return docs.updated(current, e.data.changes);
      // Assignment person-events need nothing here: the VolunteerTaskUpdated appended just before
      // each carries its FkVolunteer and DateAssigned.
      case 'VolunteerTaskAssigned':
      case 'VolunteerTaskUnassigned':
      case 'VolunteerTaskLocked':
      case 'VolunteerTaskUnlocked':
        return null;
      case 'VolunteerTaskDeleted':
        return REMOVED;
      default:
        return unknownEvent(e, null);
    }
  },
});

/** Tasks, plus following the assigned volunteer's constituent (decisions.md 6). */
export const volunteerTasksProjection: Projector<'volunteer_task' | 'constituent'> = {
  ...base,
  categories: ['volunteer_task', 'constituent'],
  eventTypes: { constituent: ['ConstituentUpdated', 'ConstituentErased'] },
  async apply(event, store) {
    if (inCategory(event, 'volunteer_task')) return base.apply(event, store);
    if (event.type === 'ConstituentErased') {
      await store.updateWhere(VOLUNTEER_TASKS, eq('_volunteerConstituent', event.data.id), taskVolunteerFields(null));
      return;
    }
    if (event.type !== 'ConstituentUpdated') return;
    const set = copiedChanges(event.data.changes, TASK_VOLUNTEER_FIELDS);
    if (set) await store.updateWhere(VOLUNTEER_TASKS, eq('_volunteerConstituent', event.data.id), set);
  },
};

export interface TaskListQuery {
  search?: string;
  isComplete?: boolean;
  volunteerId?: number;
  taskGroupId?: number;
}

/**
 * Search over title, description, contact, location and volunteer name (spec 4.3); ordered by
 * start, nulls last, then id (decisions.md 5); hours summed over the whole filtered set.
 */
export function taskSearch(team: number, q: TaskListQuery, page: { page: number; pageSize: number }): Query {
  return {
    collection: VOLUNTEER_TASKS,
    filter: and(
      eq('FkTeam', team),
      q.search ? searchFilter(q.search, TASK_SEARCH_FIELDS, 'PkTask') : undefined,
      // An unset IsComplete is not complete.
      q.isComplete !== undefined && (q.isComplete ? eq('IsComplete', true) : { op: 'ne', field: 'IsComplete', value: true }),
      q.volunteerId !== undefined && eq('FkVolunteer', q.volunteerId),
      q.taskGroupId !== undefined && eq('FkTaskGroup', q.taskGroupId),
    ),
    sort: TASK_ORDER,
    page,
    sums: ['NumberOfHours'],
  };
}
