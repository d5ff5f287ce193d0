import { randomUUID } from 'node:crypto';
import { dbNameOf } from './store/mongo.js';
import { type Collection, MongoClient, MongoServerError } from 'mongodb';
import type { Lease } from './lease.js';

interface LeaseDoc {
  _id: string;
  holder: string;
  expiresAt: Date;
}

/**
 * A lease document in the read store's database, for deployments on MongoDB without NATS. The
 * expiry is computed by the database (`$$NOW`), so process clocks never decide who holds it.
 * One conditional upsert takes a free or lapsed lease or renews our own; when another holder's
 * unexpired document exists, the filter misses and the upsert's insert hits the unique `_id`.
 */
export class MongoLease implements Lease {
  readonly holder = randomUUID();

  private constructor(
    private readonly client: MongoClient,
    private readonly leases: Collection<LeaseDoc>,
    private readonly name: string,
    readonly ttlMs: number,
  ) {}

  /** `url` is TURNOUT_MONGO_URL; the database is the read store's: the one the URL names, else `turnout`. */
  static async connect(url: string, name: string, ttlMs = 15_000): Promise<MongoLease> {
    const client = await new MongoClient(url).connect();
    return new MongoLease(client, client.db(dbNameOf(url)).collection<LeaseDoc>('_leases'), name, ttlMs);
  }

  async acquire(): Promise<boolean> {
    try {
      await this.leases.updateOne(
        { _id: this.name, $or: [{ holder: this.holder }, { $expr: { $lt: ['$expiresAt', '$$NOW'] } }] },
        [{ $set: { holder: this.holder, expiresAt: { $add: ['$$NOW', this.ttlMs] } } }],
        { upsert: true },
      );
      return true;
    } catch (err) {
      if (err instanceof MongoServerError && err.code === 11000) return false;
      throw err;
    }
  }

  async release(): Promise<void> {
    await this.leases.deleteOne({ _id: this.name, holder: this.holder });
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
