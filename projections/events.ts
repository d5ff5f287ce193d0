import { RESOURCES } from '../domain/resources.js';
import { EVENT_READ_FIELDS, formReadValues } from '../domain/event/creation.js';
import { unknownEvent } from '../domain/shared/events.js';
import { geographyNames } from './lookups.js';
import { recordProjection, REMOVED } from './records.js';
import { and, eq, gte, lte, type Query, searchFilter, type SortKey } from './store/port.js';

export const EVENTS = 'events';

export const EVENT_SEARCH_FIELDS = [
  'EventTitle', 'ContactName', 'ContactEmail', 'ContactPhone',
  'EventLocation', 'EventLocationAddress', 'EventLocationCity', 'EventLocationZipCode', 'EventLocationState',
];

/** GET /events' order (decisions.md 5): newest StartDate first, then id descending. */
const EVENT_ORDER: SortKey[] = [
  { field: 'StartDate', dir: 'desc' },
  { field: 'PkEvent', dir: 'desc' },
];

export const eventsProjection = recordProjection({
  category: RESOURCES.event.category,
  version: 2,
  revisions: true,
  collection: {
    name: EVENTS,
    idField: RESOURCES.event.idField,
    indexes: [['FkTeam']],
    sorts: [{ where: ['FkTeam'], sort: EVENT_ORDER }],
    search: [{ fields: EVENT_SEARCH_FIELDS, where: ['FkTeam'], sort: EVENT_ORDER }],
  },
  fields: EVENT_READ_FIELDS,
  // District and precinct names come from the team's lookups (decisions.md 6).
  derive: (doc, store) => geographyNames(store, doc),
  change(e, current, docs) {
    switch (e.type) {
      case 'EventCreated':
        return docs.created(e.data.fields);
      case 'EventUpdated':
        return docs.updated(current, e.data.changes);
      // The form defaults' flags are read fields; the seeded templates and the form design live in the history only.
      case 'EventPublicFormDefaultsApplied':
        return docs.updated(current, formReadValues(e.data.defaults));
      case 'EventNotificationTemplatesSeeded':
      case 'EventLocked':
      case 'EventUnlocked':
        return null;
      case 'EventDeleted':
        return REMOVED;
      default:
        return unknownEvent(e, null);
    }
  },
});


export interface EventFilters {
  search?: string;
  startDate?: string;
  endDate?: string;
  statusId?: number;
  eventTypeId?: number;
  categoryId?: number;
  seasonId?: number;
}

/** GET /events (spec 4.4, decisions.md 5): every filter combinable; newest StartDate first, then id descending. */
export function eventSearch(team: number, f: EventFilters, page: { page: number; pageSize: number }): Query {
  const opt = <T>(v: T | undefined, make: (v: T) => ReturnType<typeof eq>) => (v === undefined ? undefined : make(v));
  return {
    collection: EVENTS,
    filter: and(
      eq('FkTeam', team),
      f.search ? searchFilter(f.search, EVENT_SEARCH_FIELDS, 'PkEvent') : undefined,
      opt(f.startDate, (v) => gte('StartDate', v)),
      opt(f.endDate, (v) => lte('StartDate', v)),
      opt(f.statusId, (v) => eq('FkStatus', v)),
      opt(f.eventTypeId, (v) => eq('FkEventType', v)),
      opt(f.categoryId, (v) => eq('FkCategory', v)),
      opt(f.seasonId, (v) => eq('FkSeason', v)),
    ),
    sort: EVENT_ORDER,
    page,
  };
}
