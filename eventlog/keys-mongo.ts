import { type Collection, type Db, MongoBulkWriteError, MongoClient, MongoServerError } from 'mongodb';
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
    // Majority both ways: a key read is one no failover can roll back, and a key made is written
    // to a majority before anything is sealed under it. With `local`, another process could seal
    // events in the log under a key a failover then loses (MongoDB: data read at "local" "may be
    // rolled back"), and their personal fields would open for no one: an erasure no one asked for.
    return new MongoKeyStore(db.collection<KeyDoc>('data_keys', { readConcern: { level: 'majority' }, writeConcern: { w: 'majority' } }), main, client);
  }

  /** Its own connection to the deployment's database (`dbName`: the read store's, projections/store/mongo.ts dbNameOf). */
  static async connect(url: string, dbName: string, main: Sealer): Promise<MongoKeyStore> {
    const client = await new MongoClient(url).connect();
    return MongoKeyStore.on(client.db(dbName), main, client);
  }

  async keyFor(subject: string, create: boolean): Promise<Buffer | null> {
    return (await this.keysFor([subject], create)).get(subject) ?? null;
  }

  async keysFor(subjects: readonly string[], create: boolean): Promise<Map<string, Buffer | null>> {
    const out = new Map<string, Buffer | null>();
    const found = await this.keys.find({ _id: { $in: [...subjects] } }).toArray();
    const missing = new Set(subjects);
    for (const doc of found) missing.delete(doc._id);
    if (create && missing.size) {
      const made = [...missing].map((subject) => ({ subject, key: Sealer.newKey() }));
      try {
        // Unordered: a subject another process made first fails alone, the others are inserted.
        await this.keys.insertMany(
          made.map(({ subject, key }) => ({ _id: subject, wrapped: wrapKey(this.main, subject, key), destroyedAt: null })),
          { ordered: false },
        );
        for (const { subject, key } of made) out.set(subject, key);
      } catch (err) {
        if (!duplicateOnly(err)) throw err;
        // Which of ours won is not said per document: read every one back.
        return this.keysFor(subjects, false);
      }
    }
    for (const doc of found) out.set(doc._id, doc.wrapped ? unwrapKey(this.main, doc._id, doc.wrapped) : null);
    return out;
  }

  async destroy(subject: string): Promise<void> {
    await this.keys.updateOne({ _id: subject }, { $set: { wrapped: null, destroyedAt: new Date() } }, { upsert: true });
  }

  async close(): Promise<void> {
    await this.client?.close();
  }
}

/** Every failure a duplicate `_id`: racing first uses, where the first insert wins. */
function duplicateOnly(err: unknown): boolean {
  // The driver throws a bulk error for insertMany (a write concern's failure too, with no write
  // errors: not a duplicate), a server error for a single write.
  if (err instanceof MongoBulkWriteError) {
    const errors = [err.writeErrors].flat();
    return errors.length > 0 && errors.every((e) => e.code === 11000);
  }
  return err instanceof MongoServerError && err.code === 11000;
}
