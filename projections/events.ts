import { EVENT_READ_FIELDS, formReadValues, type PublicFormDefaults } from '../domain/event/creation.js';
import { EVENT, EVENT_CATEGORY, FORM_DEFAULTS_APPLIED } from '../domain/event/events.js';
import { geographyNames } from './lookups.js';
import { recordProjection } from './records.js';
import { and, eq, gte, lte, type Query, searchFilter } from './store/port.js';

export const EVENTS = 'events';

/** Every field an event reads back, null when unset. */

export const eventsProjection = recordProjection({
  prefix: EVENT,
  category: EVENT_CATEGORY,
  collection: { name: EVENTS, idField: 'PkEvent', indexes: [['FkTeam']] },
  fields: EVENT_READ_FIELDS,
  // The seeded templates and the form design live in the history only; the form defaults' flags are read fields.
  extra: (doc, event) => {
    if (event.type !== FORM_DEFAULTS_APPLIED) return null;
    return { ...doc, ...formReadValues(event.data.defaults as PublicFormDefaults) };
  },
  // District and precinct names come from the team's lookups (decisions.md 6).
  derive: (doc, store) => geographyNames(store, doc),
});

export const EVENT_SEARCH_FIELDS = [
  'EventTitle', 'ContactName', 'ContactEmail', 'ContactPhone',
  'EventLocation', 'EventLocationAddress', 'EventLocationCity', 'EventLocationZipCode', 'EventLocationState',
];

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
    sort: [
      { field: 'StartDate', dir: 'desc' },
      { field: 'PkEvent', dir: 'desc' },
    ],
    page,
  };
}
