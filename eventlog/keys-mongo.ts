import { type Collection, type Db, MongoServerError } from 'mongodb';
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
  ) {}

  static on(db: Db, main: Sealer): MongoKeyStore {
    return new MongoKeyStore(db.collection<KeyDoc>('data_keys'), main);
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

  async close(): Promise<void> {}
}
