import { PERSON_COPIES, PERSONAL_FIELDS } from '../domain/constituent/rules.js';
import { RESOURCES } from '../domain/resources.js';
import { emailKey } from '../domain/shared/values.js';
import { FEED_MODEL } from '../dispatcher/feed-model.js';
import { and, type CollectionDef, type Doc, eq, type Filter, gte, or, type ReadStore } from '../projections/store/port.js';

/**
 * decisions.md §17 for the read models of other builds sharing the read store (MongoDB keeps a
 * collection per projector version, mongo-versions.ts): a build that no longer runs never applies
 * ConstituentErased, so its collections would keep the person until `rebuild --drop-unused`. The
 * erasure cleans them itself, in the shape that build's projectors give an erased person: the
 * constituent's own document removed (its projector answers REMOVED, so its reads say 404, and a
 * later catch-up makes no document where there is none), and each linked copy holding an erased
 * value set to null. The change feed's collections are FeedModel.redactOtherVersions's.
 */

/** The read store that builds of several versions share, and the collections of this build's read models. */
export interface SharedReadModels {
  store: ReadStore;
  collections: readonly CollectionDef[];
}

export interface ErasedPerson {
  team: number;
  /** Its PkConstituent. */
  id: number;
  /** Every value its personal fields held, at any revision (eventlog/erase.ts personalValues). */
  values: readonly string[];
}

/** The constituent read model's key: the document keyed by the person's id there is its own record. */
const OWN_RECORD = RESOURCES.constituent.idField;
/** Fields by which a document names the constituent it copies: the copies of another person are never touched, even where they hold the same text. */
const LINKS = ['FkConstituent', '_volunteerConstituent'];
/** Personal fields, linked copies, and a notification's address (projections/outbox.ts `to`), each nulled where it holds an erased value. */
const COPY_KEYS = [...new Set([...PERSONAL_FIELDS, ...PERSON_COPIES, 'to'])];
/** The e-mail kept lowercased for look-ups (volunteers.ts `_email1`): it matches the erased e-mail's key, not its text. */
const KEYED_EMAIL = '_email1';

/** Documents read per look: the team's matching documents come a page at a time, by key. */
const BATCH = 500;

/**
 * Cleans every other-version collection of every read model in `shared` (but the change feed's) of
 * the person: idempotent, as a resumed erasure runs it again. Reads only the team's documents
 * holding one of the values, and only where other versions exist (around a blue/green deploy).
 * Answers how many documents changed.
 */
export async function cleanOtherVersions(shared: SharedReadModels, person: ErasedPerson, batch = BATCH): Promise<number> {
  const { store } = shared;
  if (!store.otherVersions || !person.values.length) return 0;
  const values = new Set(person.values);
  const keyed = new Set(person.values.map(emailKey));
  const holding = or(...COPY_KEYS.map((k): Filter => ({ op: 'in', field: k, values: [...values] })), { op: 'in', field: KEYED_EMAIL, values: [...keyed] });
  let changed = 0;
  for (const def of shared.collections) {
    if (def.name === FEED_MODEL.name) continue;
    for (const other of await store.otherVersions(def.name)) {
      if (def.idField === OWN_RECORD) {
        if (await other.get(def.name, person.id)) {
          await other.remove(def.name, person.id);
          changed++;
        }
        continue;
      }
      changed += await redactCopies(other, def, person, holding, values, keyed, batch);
    }
  }
  return changed;
}

async function redactCopies(
  store: ReadStore,
  def: CollectionDef,
  person: ErasedPerson,
  holding: Filter,
  values: ReadonlySet<string>,
  keyed: ReadonlySet<string>,
  batch: number,
): Promise<number> {
  let changed = 0;
  // By key from the last one seen: documents that are left as they are (another person's) still
  // match, so a page number or "the first page again" would not move on.
  for (let after: string | number | null = null; ; ) {
    const docs = await scanOf(store, def, and(eq('FkTeam', person.team), holding, after !== null && gte(def.idField, after)), after === null ? batch : batch + 1);
    const fresh = after === null ? docs : docs.filter((d) => d[def.idField] !== after);
    for (const doc of fresh) {
      if (LINKS.some((l) => doc[l] != null && doc[l] !== person.id)) continue;
      const set: Doc = {};
      for (const k of COPY_KEYS) if (typeof doc[k] === 'string' && values.has(doc[k])) set[k] = null;
      if (typeof doc[KEYED_EMAIL] === 'string' && keyed.has(doc[KEYED_EMAIL])) set[KEYED_EMAIL] = null;
      if (!Object.keys(set).length) continue;
      // Only these fields: a build of that version still running may be writing the document's others.
      await store.updateWhere(def.name, eq(def.idField, doc[def.idField] as string | number), set);
      changed++;
    }
    if (fresh.length < batch) return changed;
    after = fresh[fresh.length - 1][def.idField] as string | number;
  }
}

async function scanOf(store: ReadStore, def: CollectionDef, filter: Filter, limit: number): Promise<Doc[]> {
  if (store.scan) return store.scan<Doc>(def.name, filter, def.idField, limit);
  const page = await store.find<Doc>({ collection: def.name, filter, sort: [{ field: def.idField, dir: 'asc' }], page: { page: 1, pageSize: limit } });
  return page.items;
}
