import { RESOURCES } from '../domain/resources.js';
import { unknownEvent } from '../domain/shared/events.js';
import { TASK_GROUP_FIELDS } from '../domain/task-group/events.js';
import { geographyNames } from './lookups.js';
import { recordProjection } from './records.js';
import { and, eq, type Query, searchFilter } from './store/port.js';

export const TASK_GROUPS = 'volunteerTaskGroups';

const TASK_GROUP_SEARCH_FIELDS = ['TaskGroupTitle', 'GroupLocationName'];

export const taskGroupsProjection = recordProjection({
  category: RESOURCES.taskGroup.category,
  version: 1,
  collection: {
    name: TASK_GROUPS,
    idField: RESOURCES.taskGroup.idField,
    indexes: [['FkTeam']],
    search: [{ fields: TASK_GROUP_SEARCH_FIELDS, where: ['FkTeam'], sort: [{ field: 'PkTaskGroup', dir: 'asc' }] }],
  },
  fields: [...Object.keys(TASK_GROUP_FIELDS), 'DistrictName', 'PrecinctName'],
  derive: (doc, store) => geographyNames(store, doc),
  change(e, _current, docs) {
    switch (e.type) {
      case 'VolunteerTaskGroupCreated':
        return docs.created(e.data.fields);
      default:
        return unknownEvent(e.type, null);
    }
  },
});

export function taskGroupSearch(team: number, search: string | undefined, page: { page: number; pageSize: number }): Query {
  return {
    collection: TASK_GROUPS,
    filter: and(eq('FkTeam', team), search ? searchFilter(search, TASK_GROUP_SEARCH_FIELDS, 'PkTaskGroup') : undefined),
    sort: [{ field: 'PkTaskGroup', dir: 'asc' }],
    page,
  };
}
