import { invalidField, notFound } from '../domain/shared/errors.js';
import type { Values } from '../domain/shared/fields.js';
import { publicView, type ReadStore } from './store/port.js';

/** One record of the team, as the API shows it; another team's record is indistinguishable from a missing one. */
export async function readTeamRecord(store: ReadStore, collection: string, what: string, team: number, id: number): Promise<Values> {
  const doc = await store.get<Values>(collection, id);
  if (!doc || doc.FkTeam !== team) throw notFound(what, id);
  return publicView(doc);
}

/**
 * An Fk field must name a record of the team's own; a deleted one is gone from the read model, and
 * another team's reads as missing: otherwise invalid_field naming the field (decisions.md 3).
 * `what` carries its article: "a constituent".
 */
export async function assertTeamRecord(store: ReadStore, collection: string, team: number, id: unknown, field: string, what: string): Promise<void> {
  if (typeof id !== 'number') return;
  const doc = await store.get<{ FkTeam: number }>(collection, id);
  if (!doc || doc.FkTeam !== team) throw invalidField(field, `${field} ${id} is not ${what} of this account.`);
}
