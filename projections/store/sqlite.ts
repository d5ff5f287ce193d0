import type { Position } from '../../domain/shared/events.js';
import type { CollectionDef, Doc, Filter, JsonShape, Page, Query, ReadStore, Transactions } from './port.js';
import { SqliteReadCore } from './sqlite-core.js';

/**
 * The embedded read store on SQLite: the port's async face over the synchronous core
 * (sqlite-core.ts), which callers that batch writes (a projector's events and its checkpoint in
 * one transaction) may use directly.
 */
export class SqliteReadStore implements ReadStore {
  readonly core: SqliteReadCore;

  /** `path` is a database file of its own (e.g. `<dataDir>/readmodels.sqlite`) or ':memory:'. */
  constructor(pathOrCore: string | SqliteReadCore) {
    this.core = typeof pathOrCore === 'string' ? new SqliteReadCore(pathOrCore) : pathOrCore;
  }

  async defineCollection(def: CollectionDef): Promise<void> {
    this.core.define(def);
  }

  async get<T = Doc>(collection: string, id: number | string): Promise<T | null> {
    return this.core.get(collection, id) as T | null;
  }

  getJson(collection: string, id: number | string, shape: JsonShape): { json: string; picked: unknown[] } | null {
    return this.core.getJson(collection, id, shape);
  }

  changeMark(): number {
    return this.core.changeMark();
  }

  async find<T = Doc>(query: Query): Promise<Page<T>> {
    return this.core.find(query) as Page<T>;
  }

  async scan<T = Doc>(collection: string, filter: Filter, key: string, limit: number): Promise<T[]> {
    return this.core.scan(collection, filter, key, limit) as T[];
  }

  async put(collection: string, doc: Doc): Promise<void> {
    this.core.put(collection, doc);
  }

  async insertIfAbsent(collection: string, doc: Doc): Promise<boolean> {
    return this.core.insertIfAbsent(collection, doc);
  }

  async updateWhere(collection: string, filter: Filter, set: Doc): Promise<void> {
    this.core.updateWhere(collection, filter, set);
  }

  async remove(collection: string, id: number | string): Promise<void> {
    this.core.remove(collection, id);
  }

  async getCheckpoint(name: string): Promise<Position | null> {
    return this.core.getCheckpoint(name);
  }

  async setCheckpoint(name: string, position: Position): Promise<void> {
    this.core.setCheckpoint(name, position);
  }

  async setCheckpoints(checkpoints: ReadonlyArray<readonly [string, Position]>): Promise<void> {
    this.core.setCheckpoints(checkpoints);
  }

  /**
   * The connection's transactions, one at a time: a run waits for the one open to end. The
   * store's own awaits are microtasks only (the core is synchronous); a projector that reads the
   * log as it applies (the change feed's, dispatcher/feed-model.ts) may wait on real I/O
   * (EventStoreDB, a key fetch), and meanwhile other users of the connection work inside the open
   * transaction: reads see its writes a moment early, and a plain write commits or rolls back
   * with it. A write that must not be undone by that chunk's failure (an erasure's rewrite,
   * decisions.md §17) goes through a run of its own, which begins only after the chunk ended.
   */
  async transactions(): Promise<Transactions> {
    return this.connection;
  }

  /** The end of the last transaction queued (settled either way). */
  private queue: Promise<unknown> = Promise.resolve();

  private readonly connection: Transactions = {
    run: <T>(work: (store: ReadStore) => Promise<T>): Promise<T> => {
      const turn = this.queue.then(async () => {
        this.core.begin();
        try {
          const result = await work(this);
          this.core.commit();
          return result;
        } catch (err) {
          this.core.rollback();
          throw err;
        }
      });
      this.queue = turn.catch(() => undefined);
      return turn;
    },
  };

  async close(): Promise<void> {
    this.core.close();
  }
}
