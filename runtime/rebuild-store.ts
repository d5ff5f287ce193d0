import type { Doc } from '../projections/store/port.js';
import { SqliteReadStore } from '../projections/store/sqlite.js';
import { keyOf } from '../projections/store/sqlite-schema.js';

/**
 * The read store of a file built from nothing by one connection (an offline rebuild's own file,
 * runtime/rebuild.ts): it knows every key it has written, so a look-up of any other key answers
 * null without asking SQLite, as nothing else writes the file meanwhile. Nine events in ten of a
 * large team's log create a record, and a record projector looks each one up first (its `_rev`
 * guard, projections/records.ts): a miss in the key's index every time, on the rebuild's longer
 * thread. The keys of a million records take some tens of MB, for the rebuild's length.
 */
export class FreshFileStore extends SqliteReadStore {
  /** Each collection's keys, an integer one as its number (a cheaper set member than its text). */
  private readonly written = new Map<string, Set<number | string>>();
  /** A stored row is the same without a document's unset fields (sqlite-schema.ts storedDoc), and reads them as null. */
  readonly unsetReadsAsNull = true;

  override async get<T = Doc>(collection: string, id: number | string): Promise<T | null> {
    // Removed keys stay in the set: SQLite answers those (null), as it would anyway.
    if (!this.written.get(collection)?.has(member(id))) {
      this.core.plan(collection); // throws for a collection the file does not have, as SQLite's read would
      return null;
    }
    return super.get<T>(collection, id);
  }

  override async put(collection: string, doc: Doc): Promise<void> {
    await super.put(collection, doc);
    this.wrote(collection, doc);
  }

  override async insertIfAbsent(collection: string, doc: Doc): Promise<boolean> {
    const inserted = await super.insertIfAbsent(collection, doc);
    this.wrote(collection, doc);
    return inserted;
  }

  private wrote(collection: string, doc: Doc): void {
    let keys = this.written.get(collection);
    if (!keys) this.written.set(collection, (keys = new Set()));
    const plan = this.core.plan(collection);
    const id = doc[plan.def.idField];
    keys.add(member(typeof id === 'number' ? id : keyOf(plan, doc)));
  }
}

/**
 * A key (an id, or its text as keyOf writes it) as the set holds it: the number whose text it is,
 * where that is a safe integer (so `12` and `'12'`, one key in SQLite, are one member), else its text.
 */
function member(id: number | string): number | string {
  if (typeof id === 'number') return Number.isSafeInteger(id) ? id : member(String(id));
  const n = Number(id);
  return Number.isSafeInteger(n) && String(n) === id ? n : id;
}
