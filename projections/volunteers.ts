import { VOLUNTEER, statusEventFields } from '../domain/volunteer/events.js';
import { VOLUNTEER_FIELDS, VOLUNTEER_LINKED } from '../domain/volunteer/rules.js';
import { emailKey } from '../domain/shared/values.js';
import { CONSTITUENTS } from './constituents.js';
import { CONSTITUENT } from '../domain/constituent/events.js';
import { copiedChanges, recordProjection } from './records.js';
import type { Projector } from './runner.js';
import { and, type Doc, eq, type Query, searchFilter } from './store/port.js';

export const VOLUNTEERS = 'volunteers';

/** The linked constituent's name and contact, as a volunteer read carries them (spec 2.2). */
export function linkedFields(c: Doc | null): Doc {
  const email = (c?.Email1 as string | null | undefined) ?? null;
  return { ConstituentName: c?.ConstituentName ?? null, Email1: email, Phone1: c?.Phone1 ?? null, _email1: email ? emailKey(email) : null };
}

const LINKED_COPY = Object.fromEntries(VOLUNTEER_LINKED.map((f) => [f, f]));

const base = recordProjection({
  prefix: VOLUNTEER,
  category: 'volunteer',
  collection: { name: VOLUNTEERS, idField: 'PkVolunteer', indexes: [['FkTeam'], ['FkConstituent'], ['FkTeam', '_email1']] },
  fields: [...Object.keys(VOLUNTEER_FIELDS), ...VOLUNTEER_LINKED],
  derive: async (doc, store) => linkedFields(await store.get<Doc>(CONSTITUENTS, doc.FkConstituent as number)),
  extra: (doc, event) => {
    const set = statusEventFields(event.type, event.data);
    return set ? { ...doc, ...set } : null;
  },
});

/**
 * Volunteers, plus following the linked constituent: the constituents projector runs first, so
 * a ConstituentUpdated that changes the name, Email1 or Phone1 copies the new values here.
 */
export const volunteersProjection: Projector = {
  ...base,
  categories: ['volunteer', 'constituent'],
  async apply(event, store) {
    await base.apply(event, store);
    // The constituent's current values, not the changes alone: the email key is derived from them.
    if (!copiedChanges(event, CONSTITUENT, LINKED_COPY)) return;
    const id = event.data.id as number;
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
      q.search ? searchFilter(q.search, ['ConstituentName', 'Email1'], 'PkVolunteer') : undefined,
      q.isActive !== undefined && eq('IsActive', q.isActive),
    ),
    sort: [{ field: 'PkVolunteer', dir: 'asc' }],
    page,
  };
}
