import { type Collection, type Db, MongoClient, MongoServerError } from 'mongodb';
import { onceUntilFailed } from '../../eventlog/once.js';
import { dbNameOf } from '../../projections/store/mongo.js';
import { type Begun, type IdempotencyStore, STALE_MS, type StoredAnswer, TTL_MS } from './port.js';

interface Entry {
  _id: string;
  fingerprint: string;
  startedAt: number;
  /** When MongoDB's TTL monitor may drop the entry. */
  expiresAt: Date;
  answer: StoredAnswer | null;
}

const DUPLICATE_KEY = 11000;

/**
 * Idempotency keys in one MongoDB collection, shared by every API process of the production
 * stack. A TTL index drops entries a day old (MongoDB sweeps about once a minute, so begin()
 * also ignores an entry past its time). Racing requests: the insert of `_id` succeeds for
 * exactly one; an expired or abandoned entry is taken over by a replace conditioned on the
 * start time read, so again exactly one wins.
 */
export class MongoIdempotencyStore implements IdempotencyStore {
  /** The TTL index, made at the first request; tried again after a failure. */
  private readonly index: () => Promise<unknown>;

  constructor(
    private readonly keys: Collection<Entry>,
    private readonly client: MongoClient | null = null,
  ) {
    this.index = onceUntilFailed(() => this.keys.createIndexes([{ key: { expiresAt: 1 }, name: 'expires', expireAfterSeconds: 0 }]));
  }

  static async connect(url: string): Promise<MongoIdempotencyStore> {
    const client = new MongoClient(url);
    await client.connect();
    return MongoIdempotencyStore.on(client.db(dbNameOf(url)), client);
  }

  static on(db: Db, client: MongoClient | null = null): MongoIdempotencyStore {
    return new MongoIdempotencyStore(db.collection<Entry>('idempotency_keys'), client);
  }

  async begin(scope: string, key: string, fingerprint: string, now: number): Promise<Begun> {
    await this.index();
    const _id = `${scope}\n${key}`;
    const fresh: Entry = { _id, fingerprint, startedAt: now, expiresAt: new Date(now + TTL_MS), answer: null };
    try {
      await this.keys.insertOne(fresh);
      return { state: 'started' };
    } catch (err) {
      if (!(err instanceof MongoServerError && err.code === DUPLICATE_KEY)) throw err;
    }
    const found = await this.keys.findOne({ _id });
    if (!found) return this.begin(scope, key, fingerprint, now); // dropped in between
    const live = found.answer ? found.startedAt > now - TTL_MS : found.startedAt > now - STALE_MS;
    if (live) return found.answer ? { state: 'done', fingerprint: found.fingerprint, answer: found.answer } : { state: 'running', fingerprint: found.fingerprint };
    const taken = await this.keys.replaceOne({ _id, startedAt: found.startedAt }, fresh);
    return taken.modifiedCount ? { state: 'started' } : this.begin(scope, key, fingerprint, now);
  }

  /** decisions.md §17: the stored answers `stale` picks get `redact(body)` (the port's redact). */
  async redact(stale: (body: string) => boolean, redact: (body: string) => string): Promise<number> {
    let n = 0;
    for await (const doc of this.keys.find({ answer: { $ne: null } }, { projection: { _id: 1, answer: 1 } })) {
      if (!doc.answer || !stale(doc.answer.body)) continue;
      await this.keys.updateOne({ _id: doc._id }, { $set: { 'answer.body': redact(doc.answer.body) } });
      n++;
    }
    return n;
  }

  async complete(scope: string, key: string, answer: StoredAnswer): Promise<void> {
    await this.keys.updateOne({ _id: `${scope}\n${key}` }, { $set: { answer } });
  }

  async release(scope: string, key: string): Promise<void> {
    await this.keys.deleteOne({ _id: `${scope}\n${key}`, answer: null });
  }

  async close(): Promise<void> {
    await this.client?.close();
  }
}
