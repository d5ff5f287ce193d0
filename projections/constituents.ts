import { RESOURCES } from '../domain/resources.js';
import { unknownEvent } from '../domain/shared/events.js';
import { CONSTITUENT_FIELDS } from '../domain/constituent/rules.js';
import { emailKey } from '../domain/shared/values.js';
import { recordProjection, REMOVED } from './records.js';
import { and, eq, type Filter, type Query, searchFilter } from './store/port.js';

export const CONSTITUENTS = 'constituents';

/** What the in-app list searches (spec 4.1), in the order the query names them (the search index is kept per field set). */
const CONSTITUENT_SEARCH_FIELDS = ['ConstituentName', 'FirstName', 'LastName', 'Nickname', 'Email1', 'Email2'];

export const constituentsProjection = recordProjection({
  category: RESOURCES.constituent.category,
  // 2: the record's revision kept with its row (one-read GET and ETag); 3: documents stored without
  // their nulls and what their columns hold, fields keyed by place (sqlite-schema.ts storedDoc).
  version: 3,
  revisions: true,
  collection: {
    name: CONSTITUENTS,
    idField: RESOURCES.constituent.idField,
    indexes: [['FkTeam'], ['FkTeam', '_email1']],
    search: [{ fields: CONSTITUENT_SEARCH_FIELDS, where: ['FkTeam'], sort: [{ field: 'PkConstituent', dir: 'asc' }] }],
    // Other projectors read a constituent by id only (volunteers.ts): the e-mail look-up is the API's.
    lookupsOutsideProjection: true,
  },
  fields: Object.keys(CONSTITUENT_FIELDS),
  derive: (doc) => ({ _email1: typeof doc.Email1 === 'string' ? emailKey(doc.Email1) : null }),
  deriveTakesUnset: true,
  change(e, current, docs) {
    switch (e.type) {
      case 'ConstituentCreated':
        return docs.created(e.data.fields);
      case 'ConstituentUpdated':
        return docs.updated(current, e.data.changes);
      case 'ConstituentLocked':
      case 'ConstituentUnlocked':
        return null; // locks are the aggregate's to enforce; reads do not show them
      case 'ConstituentDeleted':
      case 'ConstituentErased':
        return REMOVED;
      default:
        return unknownEvent(e, null);
    }
  },
});

/** Emails match case-insensitively everywhere (decisions.md 3). */
export const byEmail = (team: number, email: string): Filter => and(eq('FkTeam', team), eq('_email1', emailKey(email)));

export const activeByEmail = (team: number, email: string): Filter =>
  and(eq('FkTeam', team), eq('_email1', emailKey(email)), eq('IsActiveConstituent', true));

/** Search by name, email or id, as the in-app list does (spec 4.1). */
export function constituentSearch(team: number, search: string | undefined, page: { page: number; pageSize: number }): Query {
  return {
    collection: CONSTITUENTS,
    filter: and(
      eq('FkTeam', team),
      search ? searchFilter(search, CONSTITUENT_SEARCH_FIELDS, 'PkConstituent') : undefined,
    ),
    sort: [{ field: 'PkConstituent', dir: 'asc' }],
    page,
  };
}
