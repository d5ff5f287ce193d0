import type { RecordedEvent } from '../domain/shared/events.js';
import { formatDateTime } from '../domain/shared/values.js';
import type { Projector } from './runner.js';
import type { CollectionDef, Doc, ReadStore } from './store/port.js';

export interface RecordProjectionOptions {
  /** Event type prefix of the aggregate (Constituent, Event, ...). */
  prefix: string;
  /** Stream category (`constituent` for `constituent-12`). */
  category: string;
  collection: CollectionDef;
  /** Every public field, so unset ones read as null, never absent (decisions.md 3). */
  fields: readonly string[];
  /** Derived and internal (`_`-prefixed) fields, recomputed on every change. */
  derive?: (doc: Doc, store: ReadStore) => Promise<Doc> | Doc;
  /** Events of the aggregate beyond created/updated/locked/deleted. */
  extra?: (doc: Doc, event: RecordedEvent, store: ReadStore) => Promise<Doc | null> | Doc | null;
}

/** An event's time (`Date#toISOString`, as metadataOf writes it) as the API shows date-times: UTC, to the second. */
const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const utcDateTime = (iso: string) => (CANONICAL.test(iso) ? iso.slice(0, 19) : formatDateTime(new Date(iso)));

/**
 * What a read model copies from another record it shows: when `<prefix>Updated` changed any of
 * the fields of `copy` (the record's name to the copy's name), those changes under the copy's
 * names; otherwise null. Replays apply them in log order, so the last value wins as it did live.
 */
export function copiedChanges(event: RecordedEvent, prefix: string, copy: Record<string, string>): Doc | null {
  if (event.type !== `${prefix}Updated`) return null;
  const changes = event.data.changes as Doc;
  let set: Doc | null = null;
  for (const [from, to] of Object.entries(copy)) if (from in changes) (set ??= {})[to] = changes[from];
  return set;
}

/**
 * The read model of a record aggregate: one document per record, guarded by the stream
 * revision it last applied (`_rev`), so replaying an event changes nothing.
 */
export function recordProjection(o: RecordProjectionOptions): Projector {
  const idField = o.collection.idField;
  const blank = Object.fromEntries(o.fields.map((f) => [f, null]));
  const streamPrefix = `${o.category}-`;
  return {
    name: o.collection.name,
    collections: [o.collection],
    categories: [o.category],
    async apply(event, store) {
      if (!event.stream.startsWith(streamPrefix) || !event.type.startsWith(o.prefix)) return;
      const id = Number(event.stream.slice(streamPrefix.length));
      if (!Number.isInteger(id)) return;
      const current = await store.get<Doc>(o.collection.name, id);
      const rev = Number(event.revision);
      if (current && (current._rev as number) >= rev) return;
      const at = utcDateTime(event.metadata.at);
      // A new document each time (the store's documents are never changed in place), filled in
      // here before the store sees it.
      let next: Doc | null;
      switch (event.type.slice(o.prefix.length)) {
        case 'Created':
          next = Object.assign({}, blank, event.data.fields as Doc);
          next[idField] = id;
          next.FkTeam = event.metadata.team;
          next.DateCreated = at;
          next.DateLastModified = at;
          break;
        case 'Updated':
          if (!current) return;
          next = Object.assign({}, current, event.data.changes as Doc);
          next.DateLastModified = at;
          break;
        case 'Locked':
        case 'Unlocked':
          // Locks are the aggregate's to enforce; reads do not show them.
          return;
        case 'Deleted':
          await store.remove(o.collection.name, id);
          return;
        default:
          if (!current || !o.extra) return;
          next = await o.extra(current, event, store);
          if (!next) return;
          next = { ...next, DateLastModified: at };
      }
      if (o.derive) Object.assign(next, await o.derive(next, store));
      next._rev = rev;
      await store.put(o.collection.name, next);
    },
  };
}
