import { invalidField, notFound } from '../domain/shared/errors.js';
import type { Values } from '../domain/shared/fields.js';
import { type JsonShape, publicView, type ReadStore } from './store/port.js';

/** One record of the team, as the API shows it; another team's record is indistinguishable from a missing one. */
export async function readTeamRecord(store: ReadStore, collection: string, what: string, team: number, id: number): Promise<Values> {
  const doc = await store.get<Values>(collection, id);
  if (!doc || doc.FkTeam !== team) throw notFound(what, id);
  return publicView(doc);
}

/**
 * One record of the team with the revision (decisions.md §7) its body was projected from, read in
 * one get: the record projectors keep it in the row (`_revision`, records.ts), so an ETag shown
 * with the body is never newer than it. Null for a row written before they did (a MongoDB store
 * of an older release, which is not rebuilt on a version change): the caller asks the log.
 */
export async function readTeamRecordTagged(store: ReadStore, collection: string, what: string, team: number, id: number): Promise<{ record: Values; revision: number | null }> {
  const doc = await store.get<Values>(collection, id);
  if (!doc || doc.FkTeam !== team) throw notFound(what, id);
  return { record: publicView(doc), revision: typeof doc._revision === 'number' ? doc._revision : null };
}

/**
 * As readTeamRecordTagged, with the stored document as it is, its `_` fields included: only for an
 * answer serialised through a response schema that lists the record's fields (fast-json-stringify
 * leaves every other key out), where publicView's copy would be made and thrown away.
 */
export async function readTeamRowTagged(store: ReadStore, collection: string, what: string, team: number, id: number): Promise<{ record: Values; revision: number | null }> {
  const doc = await store.get<Values>(collection, id);
  if (!doc || doc.FkTeam !== team) throw notFound(what, id);
  return { record: doc, revision: typeof doc._revision === 'number' ? doc._revision : null };
}

/** What a record's single read answered as text shows: `fields` (the response schema's, in its order), and the team and revision it checks and tags with. */
export const recordJsonShape = (fields: readonly string[]): JsonShape => ({ fields, pick: ['FkTeam', '_revision'] });

/**
 * As readTeamRecordTagged, with the record as the text of its JSON object in `shape`'s order,
 * from a store that keeps it as text (ReadStore.getJson): the same one read, with no document
 * made. Null when the store has no such read; the caller then reads with readTeamRecordTagged.
 */
export function readTeamJsonTagged(store: ReadStore, collection: string, what: string, team: number, id: number, shape: JsonShape): { json: string; revision: number | null } | null {
  if (!store.getJson) return null;
  const got = store.getJson(collection, id, shape);
  if (!got || got.picked[0] !== team) throw notFound(what, id);
  return { json: got.json, revision: typeof got.picked[1] === 'number' ? got.picked[1] : null };
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
