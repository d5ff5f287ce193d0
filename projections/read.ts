import { notFound } from '../domain/shared/errors.js';
import type { Values } from '../domain/shared/fields.js';
import { publicView, type ReadStore } from './store/port.js';

/** One record of the team, as the API shows it; another team's record is indistinguishable from a missing one. */
export async function readTeamRecord(store: ReadStore, collection: string, what: string, team: number, id: number): Promise<Values> {
  const doc = await store.get<Values>(collection, id);
  if (!doc || doc.FkTeam !== team) throw notFound(what, id);
  return publicView(doc);
}
