import type { Db } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { MongoReadStore } from '../../projections/store/mongo.js';

/** A scripted Db: records every index the store asks for, and can refuse a changed TTL as the server does. */
function scriptedDb(options: { ttlConflict?: boolean } = {}) {
  const calls: Array<{ call: string; collection?: string; args: unknown[] }> = [];
  const db = {
    collection: (collection: string) => ({
      find: () => (async function* () {})(),
      createIndexes: async (...args: unknown[]) => void calls.push({ call: 'createIndexes', collection, args }),
      createIndex: async (...args: unknown[]) => {
        calls.push({ call: 'createIndex', collection, args });
        // The server's answer to an existing index on the same key with other options.
        if (options.ttlConflict) throw Object.assign(new Error('An equivalent index already exists with different options'), { code: 85, codeName: 'IndexOptionsConflict' });
      },
    }),
    command: async (...args: unknown[]) => void calls.push({ call: 'command', args }),
  };
  return { db: db as unknown as Db, calls };
}

describe('expiring documents on MongoDB', () => {
  it('creates a TTL index on the named Date field (docs: core/index-ttl, expireAfterSeconds)', async () => {
    const { db, calls } = scriptedDb();
    await new MongoReadStore(db).defineCollection({ name: 'webhookDeliveries', idField: 'id', expireAfter: { field: '_recordedAt', seconds: 86_400 } });
    expect(calls.filter((c) => c.call === 'createIndex')).toEqual([{ call: 'createIndex', collection: 'webhookDeliveries', args: [{ _recordedAt: 1 }, { expireAfterSeconds: 86_400 }] }]);
  });

  it('changes the period of an existing TTL index with collMod, which createIndexes refuses to do', async () => {
    const { db, calls } = scriptedDb({ ttlConflict: true });
    await new MongoReadStore(db).defineCollection({ name: 'webhookDeliveries', idField: 'id', expireAfter: { field: '_recordedAt', seconds: 3_600 } });
    expect(calls.at(-1)).toEqual({ call: 'command', args: [{ collMod: 'webhookDeliveries', index: { keyPattern: { _recordedAt: 1 }, expireAfterSeconds: 3_600 } }] });
  });
});
