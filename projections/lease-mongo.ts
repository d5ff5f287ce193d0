import { randomUUID } from 'node:crypto';
import { dbNameOf } from './store/mongo.js';
import { type Collection, MongoClient, MongoServerError } from 'mongodb';
import type { Lease } from './lease.js';

export interface LeaseDoc {
  _id: string;
  holder: string;
  expiresAt: Date;
}

/** The two calls the lease makes: a scripted collection stands in for it in tests. */
export type LeaseCollection = Pick<Collection<LeaseDoc>, 'updateOne' | 'deleteOne'>;

/**
 * A lease document in the read store's database, for deployments on MongoDB without NATS. One
 * upsert takes a free or lapsed lease or renews our own; when another holder's unexpired document
 * exists, the filter misses, the upsert tries to insert and the unique `_id` refuses it (11000).
 *
 * The filter is plain: MongoDB refuses `$expr` (so `$$NOW`) in an upsert's query (error 224), so
 * the expiry is by this process's clock. Projector hosts' clocks must agree to well within a third
 * of the TTL (NTP does): a holder renews every third and gives up two thirds into it.
 */
export class MongoLease implements Lease {
  readonly holder = randomUUID();

  constructor(
    private readonly leases: LeaseCollection,
    private readonly name: string,
    readonly ttlMs: number,
    private readonly client: MongoClient | null = null,
  ) {}

  /** `url` is TURNOUT_MONGO_URL; the database is the read store's: the one the URL names, else `turnout`. */
  static async connect(url: string, name: string, ttlMs = 15_000): Promise<MongoLease> {
    const client = await new MongoClient(url).connect();
    return MongoLease.on(client, url, name, ttlMs, true);
  }

  /** A lease over a client the caller keeps (several leases through one connection); `owns`: close() closes it. */
  static on(client: MongoClient, url: string, name: string, ttlMs = 15_000, owns = false): MongoLease {
    return new MongoLease(client.db(dbNameOf(url)).collection<LeaseDoc>('_leases'), name, ttlMs, owns ? client : null);
  }

  async acquire(): Promise<boolean> {
    const now = Date.now();
    try {
      await this.leases.updateOne(
        { _id: this.name, $or: [{ expiresAt: { $lt: new Date(now) } }, { holder: this.holder }] },
        { $set: { holder: this.holder, expiresAt: new Date(now + this.ttlMs) } },
        { upsert: true },
      );
      return true;
    } catch (err) {
      // Held by another: the upsert's insert met their document's `_id`.
      if (err instanceof MongoServerError && err.code === 11000) return false;
      throw err;
    }
  }

  async release(): Promise<void> {
    await this.leases.deleteOne({ _id: this.name, holder: this.holder });
  }

  async close(): Promise<void> {
    await this.client?.close();
  }
}
