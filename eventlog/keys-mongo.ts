import { type Collection, type Db, MongoClient, MongoServerError } from 'mongodb';
import type { KeyStore } from './keys.js';
import { Sealer } from './sealing.js';
import { unwrapKey, wrapKey } from './keys.js';

interface KeyDoc {
  _id: string;
  wrapped: string | null;
  destroyedAt: Date | null;
}

/**
 * The production stack's key store (decisions.md §17): one document per subject in `data_keys`,
 * the key wrapped by the main key. The first insert of a subject wins (its `_id` is unique);
 * a destroyed key's document stays as a tombstone with `wrapped: null`.
 */
export class MongoKeyStore implements KeyStore {
  constructor(
    private readonly keys: Collection<KeyDoc>,
    private readonly main: Sealer,
    private readonly client: MongoClient | null = null,
  ) {}

  static on(db: Db, main: Sealer, client: MongoClient | null = null): MongoKeyStore {
    return new MongoKeyStore(db.collection<KeyDoc>('data_keys'), main, client);
  }

  /** Its own connection to the deployment's database (`dbName`: the read store's, projections/store/mongo.ts dbNameOf). */
  static async connect(url: string, dbName: string, main: Sealer): Promise<MongoKeyStore> {
    const client = await new MongoClient(url).connect();
    return MongoKeyStore.on(client.db(dbName), main, client);
  }

  async keyFor(subject: string, create: boolean): Promise<Buffer | null> {
    let doc = await this.keys.findOne({ _id: subject });
    if (!doc && create) {
      try {
        await this.keys.insertOne({ _id: subject, wrapped: wrapKey(this.main, subject, Sealer.newKey()), destroyedAt: null });
      } catch (err) {
        if (!(err instanceof MongoServerError && err.code === 11000)) throw err;
      }
      doc = await this.keys.findOne({ _id: subject });
    }
    return doc?.wrapped ? unwrapKey(this.main, subject, doc.wrapped) : null;
  }

  async destroy(subject: string): Promise<void> {
    await this.keys.updateOne({ _id: subject }, { $set: { wrapped: null, destroyedAt: new Date() } }, { upsert: true });
  }

  async close(): Promise<void> {
    await this.client?.close();
  }
}
