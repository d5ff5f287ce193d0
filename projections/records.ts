import type { Category, LoggedEvent } from '../domain/events.js';
import type { Values } from '../domain/shared/fields.js';
import { markAfter, type RevisionMark } from '../domain/shared/revision.js';
import { utcSecondsOf } from '../domain/shared/values.js';
import type { Projector } from './engine/projector.js';
import type { CollectionDef, Doc, ReadStore } from './store/port.js';

export interface RecordProjectionOptions<C extends Category> {
  /** Stream category (`constituent` for `constituent-12`). */
  category: C;
  /** The read model's schema version (Projector.version). */
  version: number;
  /**
   * Keep the record's revision in its document (`_revision`): the records whose single read
   * answers an ETag (decisions.md §11) read it with the body instead of from the log.
   */
  revisions?: boolean;
  collection: CollectionDef;
  /** Every public field, so unset ones read as null, never absent (decisions.md 3). */
  fields: readonly string[];
  /** Derived and internal (`_`-prefixed) fields, recomputed on every change (`event`, the one applied). */
  derive?: (doc: Doc, store: ReadStore, event: LoggedEvent<C>) => Promise<Doc> | Doc;
  /**
   * `derive` answers the same for a field left out as for one that is null: a store whose unset
   * fields read as null (ReadStore.unsetReadsAsNull) is then given a created document of its
   * set fields alone. Without derive, that holds of every projector.
   */
  deriveTakesUnset?: boolean;
  /**
   * What each of the aggregate's events does to its document: an exhaustive switch over the
   * category's union, answering a new document (`docs.created`, `docs.updated`), REMOVED, or
   * null for no change.
   */
  change: (event: LoggedEvent<C>, current: Doc | null, docs: RecordDocs) => Doc | null | typeof REMOVED;
}

/** The documents a record event makes; a new object each time (the store's are never changed in place). */
export interface RecordDocs {
  /** A created record: every public field (null when unset), then the created fields. */
  created(fields: Values): Doc;
  /** The current document with `changes` over it; null when there is none (deleted, or never seen). */
  updated(current: Doc | null, changes: Values): Doc | null;
}

/** The record was deleted: its document goes. */
export const REMOVED = Symbol('removed');

/**
 * What a read model copies from another record it shows: when an update's `changes` hold any of
 * the fields of `copy` (the record's name to the copy's name), those changes under the copy's
 * names; otherwise null. Replays apply them in log order, so the last value wins as it did live.
 */
export function copiedChanges(changes: Values, copy: Record<string, string>): Doc | null {
  let set: Doc | null = null;
  for (const [from, to] of Object.entries(copy)) if (from in changes) (set ??= {})[to] = changes[from];
  return set;
}

/**
 * The document with the record's revision (decisions.md §7) it now shows: `_revision`, read in
 * the same get as the body for its ETag (projections/read.ts), and `_write` only while the last
 * event was written before appends were stamped (domain/shared/revision.ts markAfter).
 */
/** The mark a document holds; null for none (no document, or one written before marks were kept). */
function markOf(doc: Doc | null): RevisionMark | null {
  if (!doc || typeof doc._revision !== 'number') return null;
  return { revision: doc._revision, write: typeof doc._write === 'string' ? doc._write : null };
}

function marked(doc: Doc, mark: RevisionMark): Doc {
  doc._revision = mark.revision;
  if (mark.write !== null) doc._write = mark.write;
  else if ('_write' in doc) delete doc._write;
  return doc;
}

/**
 * `Object.assign({}, {every field: null}, values)`, as one object literal of the fields compiled
 * once per projector, then any other key of `values` after them. Built the first way, the
 * document lost V8's fast properties at the next key apply() sets (a key past the 25th on an object
 * made from {}), and each put then listed, read and stringified a dictionary. The keys are the
 * domain's field names, each quoted as a JSON string.
 */
export function blankDoc(fields: readonly string[]): (values: Values) => Doc {
  for (const f of fields) if (f in Object.prototype) throw new Error(`a record field may not be named ${f}`);
  const body = fields.map((f) => `${JSON.stringify(f)}: Object.hasOwn(v, ${JSON.stringify(f)}) ? v[${JSON.stringify(f)}] : null`).join(', ');
  const literal = new Function('v', `return { ${body} };`) as (v: Values) => Doc;
  const declared = new Set(fields);
  return (values) => {
    const doc = literal(values);
    for (const k in values) if (!declared.has(k) && Object.hasOwn(values, k)) doc[k] = values[k];
    return doc;
  };
}

/**
 * The read model of a record aggregate: one document per record, guarded by the stream
 * revision it last applied (`_rev`), so replaying an event changes nothing. It keeps the
 * record's revision beside the body, written in the same put (`marked`).
 */
export function recordProjection<C extends Category>(o: RecordProjectionOptions<C>): Projector<C> {
  const idField = o.collection.idField;
  const blank = blankDoc(o.fields);
  const streamPrefix = `${o.category}-`;
  const docs: RecordDocs = {
    created: (fields) => blank(fields),
    updated: (current, changes) => (current ? Object.assign({}, current, changes) : null),
  };
  // The row stored is the same (its JSON keeps no declared null, its columns read a missing field
  // as null: sqlite-schema.ts rowOf), without a document of every field made for each create.
  const sparse: RecordDocs = { created: (fields) => Object.assign({}, fields), updated: docs.updated };
  const sparseAllowed = !o.derive || o.deriveTakesUnset === true;
  return {
    name: o.collection.name,
    version: o.version,
    // Declared, so the SQLite store leaves their nulls out of each document and keys the rest by
    // their place in the list; with the times and revision every document holds.
    collections: [{ ...o.collection, fields: [...o.fields, 'DateCreated', 'DateLastModified', '_rev', ...(o.revisions ? ['_revision'] : [])] }],
    categories: [o.category],
    async apply(event, store) {
      if (!event.stream.startsWith(streamPrefix)) return;
      const id = Number(event.stream.slice(streamPrefix.length));
      if (!Number.isInteger(id)) return;
      const current = await store.get<Doc>(o.collection.name, id);
      const rev = Number(event.revision);
      if (current && (current._rev as number) >= rev) return;
      const mark = o.revisions ? markAfter(event, markOf(current)) : null;
      const next = o.change(event, current, sparseAllowed && store.unsetReadsAsNull ? sparse : docs);
      if (next === REMOVED) {
        await store.remove(o.collection.name, id);
        return;
      }
      if (next === null) {
        // A write that changes no field (a lock) still makes a revision: the ETag shown with
        // this unchanged body is the log's, as If-Match will compare it.
        if (mark && current && current._revision !== mark.revision) await store.put(o.collection.name, marked({ ...current, _rev: rev }, mark));
        return;
      }
      const at = utcSecondsOf(event.metadata.at);
      // Only a creation makes a document where there was none (a record's later events need one).
      if (!current) {
        next[idField] = id;
        next.FkTeam = event.metadata.team;
        next.DateCreated = at;
      }
      next.DateLastModified = at;
      if (o.derive) Object.assign(next, await o.derive(next, store, event));
      next._rev = rev;
      await store.put(o.collection.name, mark ? marked(next, mark) : next);
    },
  };
}

/**
 * The document a record projector makes of a new record's events, made in memory by the
 * projector's own apply (which reads nothing but the record's own document): a create answers
 * with it, once settled, instead of reading back the row the same projector has just written.
 */
export async function newRecordDoc(projector: Projector, events: LoggedEvent[]): Promise<Doc | null> {
  let doc: Doc | null = null;
  const one = {
    get: async () => doc,
    put: async (_collection: string, next: Doc) => void (doc = next),
    remove: async () => void (doc = null),
  } as Pick<ReadStore, 'get' | 'put' | 'remove'> as ReadStore;
  for (const e of events) await projector.apply(e, one);
  return doc;
}
