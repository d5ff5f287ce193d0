import { RESOURCES } from '../domain/resources.js';
import { statusEventFields } from '../domain/volunteer/events.js';
import { inCategory } from '../domain/events.js';
import { unknownEvent } from '../domain/shared/events.js';
import { VOLUNTEER_FIELDS, VOLUNTEER_LINKED, volunteerLinkedFields } from '../domain/volunteer/rules.js';
import { emailKey } from '../domain/shared/values.js';
import { CONSTITUENTS } from './constituents.js';
import { copiedChanges, recordProjection, REMOVED } from './records.js';
import type { Projector } from './engine/projector.js';
import { and, type Doc, eq, type Query, searchFilter } from './store/port.js';

export const VOLUNTEERS = 'volunteers';

const VOLUNTEER_SEARCH_FIELDS = ['ConstituentName', 'Email1'];

/** The linked constituent's name and contact, as a volunteer read carries them (spec 2.2). */
export function linkedFields(c: Doc | null): Doc {
  const linked = volunteerLinkedFields(c);
  const email = linked.Email1 as string | null;
  return { ...linked, _email1: email ? emailKey(email) : null };
}

const LINKED_COPY = Object.fromEntries(VOLUNTEER_LINKED.map((f) => [f, f]));

const base = recordProjection({
  category: RESOURCES.volunteer.category,
  version: 2,
  revisions: true,
  collection: {
    name: VOLUNTEERS,
    idField: RESOURCES.volunteer.idField,
    indexes: [['FkTeam'], ['FkConstituent'], ['FkTeam', '_email1']],
    search: [{ fields: VOLUNTEER_SEARCH_FIELDS, where: ['FkTeam'], sort: [{ field: 'PkVolunteer', dir: 'asc' }] }],
  },
  fields: [...Object.keys(VOLUNTEER_FIELDS), ...VOLUNTEER_LINKED],
  derive: async (doc, store) => linkedFields(await store.get<Doc>(CONSTITUENTS, doc.FkConstituent as number)),
  change(e, current, docs) {
    switch (e.type) {
      case 'VolunteerCreated':
        return docs.created(e.data.fields);
      case 'VolunteerUpdated':
        return docs.updated(current, e.data.changes);
      case 'VolunteerDeactivated':
      case 'VolunteerReactivated':
      case 'VolunteerSuspended':
      case 'VolunteerSuspensionLifted':
        return docs.updated(current, statusEventFields(e));
      case 'VolunteerLocked':
      case 'VolunteerUnlocked':
        return null;
      case 'VolunteerDeleted':
        return REMOVED;
      default:
        return unknownEvent(e, null);
    }
  },
});

/**
 * Volunteers, plus following the linked constituent: the constituents projector runs first, so
 * a ConstituentUpdated that changes the name, Email1 or Phone1 copies the new values here.
 */
export const volunteersProjection: Projector<'volunteer' | 'constituent'> = {
  ...base,
  categories: ['volunteer', 'constituent'],
  eventTypes: { constituent: ['ConstituentUpdated', 'ConstituentErased'] },
  async apply(event, store) {
    if (inCategory(event, 'volunteer')) return base.apply(event, store);
    // The constituent's current values, not the changes alone: the email key is derived from them.
    // An erased one is gone from the read models, so its copies read null (decisions.md §17).
    if (event.type !== 'ConstituentErased' && (event.type !== 'ConstituentUpdated' || !copiedChanges(event.data.changes, LINKED_COPY))) return;
    const id = event.data.id;
    await store.updateWhere(VOLUNTEERS, eq('FkConstituent', id), linkedFields(await store.get<Doc>(CONSTITUENTS, id)));
  },
};


/** Search by name or email (spec 4.2), optionally active or inactive; ordered by id (decisions.md 5). */
export function volunteerSearch(team: number, q: { email?: string; search?: string; isActive?: boolean }, page: { page: number; pageSize: number }): Query {
  return {
    collection: VOLUNTEERS,
    filter: and(
      eq('FkTeam', team),
      q.email !== undefined && eq('_email1', emailKey(q.email)),
      q.search ? searchFilter(q.search, VOLUNTEER_SEARCH_FIELDS, 'PkVolunteer') : undefined,
      q.isActive !== undefined && eq('IsActive', q.isActive),
    ),
    sort: [{ field: 'PkVolunteer', dir: 'asc' }],
    page,
  };
}
