import { invalidField } from '../domain/shared/errors.js';
import type { LookupList } from '../domain/lookup/events.js';
import { unknownEvent } from '../domain/shared/events.js';
import type { Projector } from './engine/projector.js';
import type { ReadStore } from './store/port.js';

export const LOOKUPS = 'lookups';

export interface LookupDoc {
  id: number;
  FkTeam: number;
  list: LookupList;
  name: string;
}

export const lookupsProjection: Projector<'lookup'> = {
  name: LOOKUPS,
  version: 1,
  collections: [{ name: LOOKUPS, idField: 'id', indexes: [['FkTeam', 'list']] }],
  categories: ['lookup'],
  async apply(event, store) {
    switch (event.type) {
      case 'LookupAdded': {
        const d = event.data;
        await store.put(LOOKUPS, { id: d.id, FkTeam: event.metadata.team, list: d.list, name: d.name });
        return;
      }
      default:
        return unknownEvent(event.type, undefined);
    }
  },
};

export async function lookupName(store: ReadStore, team: number, list: LookupList, id: number): Promise<string | null> {
  const doc = await store.get<LookupDoc>(LOOKUPS, id);
  return doc && doc.FkTeam === team && doc.list === list ? doc.name : null;
}

/** An Fk field must name an entry of the team's own list: otherwise invalid_field naming it (decisions.md 3). */
export async function assertLookup(store: ReadStore, team: number, list: LookupList, id: unknown, field: string): Promise<void> {
  if (id === null || id === undefined) return;
  if ((await lookupName(store, team, list, id as number)) === null)
    throw invalidField(field, `${field} ${id} is not in this account's ${list}; see GET /lookups.`);
}

/** The district and precinct names of a record's FkDistrict and FkPrecinct, from its team's lookups (decisions.md 6). */
export async function geographyNames(store: ReadStore, doc: { FkTeam?: unknown; FkDistrict?: unknown; FkPrecinct?: unknown }) {
  const team = doc.FkTeam as number;
  const name = (list: LookupList, id: unknown) => (typeof id === 'number' ? lookupName(store, team, list, id) : null);
  return { DistrictName: await name('districts', doc.FkDistrict), PrecinctName: await name('precincts', doc.FkPrecinct) };
}
