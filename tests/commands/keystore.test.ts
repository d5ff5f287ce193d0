import Database from 'better-sqlite3';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { type Db, MongoBulkWriteError, MongoClient } from 'mongodb';
import { GenericContainer, type StartedTestContainer, Wait } from 'testcontainers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAGES } from '../support/containers.js';
import { SqliteKeyStore } from '../../eventlog/keys.js';
import { MongoKeyStore } from '../../eventlog/keys-mongo.js';
import { Sealer } from '../../eventlog/sealing.js';
import { dockerAvailable } from '../support/docker.js';
import { keyStoreContract } from './keystore.contract.js';

const main = new Sealer(Sealer.newKey());

describe('the embedded key store (SQLite)', () => {
  keyStoreContract('SqliteKeyStore', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'turnout-keys-'));
    const file = path.join(dir, 'keys.sqlite');
    const opened: SqliteKeyStore[] = [new SqliteKeyStore(file, main)];
    return {
      store: opened[0],
      reopen: async () => {
        const s = new SqliteKeyStore(file, main);
        opened.push(s);
        return s;
      },
      cleanup: async () => {
        for (const s of opened) await s.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });

  it('keeps keys wrapped, and leaves no byte of a destroyed one in its files (WAL included)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'turnout-keys-'));
    try {
      const file = path.join(dir, 'keys.sqlite');
      const store = new SqliteKeyStore(file, main);
      const key = (await store.keyFor('constituent-9', true))!;
      await store.keyFor('constituent-10', true);
      const files = () => Buffer.concat(readdirSync(dir).map((f) => readFileSync(path.join(dir, f))));
      expect(files().includes(key)).toBe(false);
      const peek = new Database(file, { readonly: true });
      const wrapped = peek.prepare<[], { wrapped: string }>("SELECT wrapped FROM data_keys WHERE subject = 'constituent-9'").get()!.wrapped;
      peek.close();
      expect(files().includes(Buffer.from(wrapped))).toBe(true);
      await store.destroy('constituent-9');
      expect(files().includes(Buffer.from(wrapped))).toBe(false);
      expect(await store.keyFor('constituent-10', false)).toHaveLength(32);
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('will not open a key under another main key', async () => {
    const store = new SqliteKeyStore(':memory:', main);
    await store.keyFor('constituent-1', true);
    await store.close();
    const dir = mkdtempSync(path.join(tmpdir(), 'turnout-keys-'));
    try {
      const file = path.join(dir, 'keys.sqlite');
      const a = new SqliteKeyStore(file, main);
      await a.keyFor('constituent-1', true);
      await a.close();
      const b = new SqliteKeyStore(file, new Sealer(Sealer.newKey()));
      await expect(b.keyFor('constituent-1', false)).rejects.toThrow();
      await b.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A scripted `data_keys` collection: one document map, MongoDB's duplicate-key error on insert, shared by every store opened on it. */
function scriptedDb(): Db {
  const docs = new Map<string, any>();
  const opened: unknown[] = [];
  const collection = {
    find: (f: any) => ({ toArray: async () => (f._id.$in as string[]).filter((id) => docs.has(id)).map((id) => ({ ...docs.get(id) })) }),
    // Unordered: every document that can be is inserted, then one duplicate-key error if any was refused.
    insertMany: async (ds: any[], o: any) => {
      expect(o).toEqual({ ordered: false });
      // Another process may be inserting too: yield first, so racing first uses interleave.
      await new Promise((r) => setImmediate(r));
      let refused = false;
      for (const d of ds) {
        if (docs.has(d._id)) refused = true;
        else docs.set(d._id, { ...d });
      }
      // As driver 6 answers an insertMany with refused documents (bulk/common.js handleWriteError).
      if (refused) throw new MongoBulkWriteError({ message: 'E11000 duplicate key', code: 11000, writeErrors: [{ code: 11000, index: 0, errmsg: 'E11000 duplicate key' }] as never }, {} as never);
      return { insertedCount: ds.length };
    },
    updateOne: async (f: any, u: any, o: any) => {
      if (docs.has(f._id)) Object.assign(docs.get(f._id), u.$set);
      else if (o?.upsert) docs.set(f._id, { _id: f._id, ...u.$set });
    },
  };
  return {
    collection: (name: string, options: unknown) => {
      opened.push([name, options]);
      return collection;
    },
    opened,
  } as unknown as Db;
}

describe('the MongoDB key store (scripted collection)', () => {
  keyStoreContract('MongoKeyStore', async () => {
    const db = scriptedDb();
    return { store: MongoKeyStore.on(db, main), reopen: async () => MongoKeyStore.on(db, main), cleanup: async () => {} };
  });

  it('reads and writes keys at majority, so no failover takes back a key something was sealed under', () => {
    const db = scriptedDb();
    MongoKeyStore.on(db, main);
    expect((db as unknown as { opened: unknown[] }).opened).toEqual([['data_keys', { readConcern: { level: 'majority' }, writeConcern: { w: 'majority' } }]]);
  });
});

const docker = await dockerAvailable();
if (!docker.ok) console.warn(`skipping the MongoDB key store on a container: no Docker engine reachable (${docker.reason})`);

describe.skipIf(!docker.ok)('the MongoDB key store (container)', () => {
  let container: StartedTestContainer;
  let client: MongoClient;
  beforeAll(async () => {
    container = await new GenericContainer(IMAGES.mongo)
      .withExposedPorts(27017)
      .withWaitStrategy(Wait.forLogMessage(/Waiting for connections/))
      .withStartupTimeout(120_000)
      .start();
    client = await new MongoClient(`mongodb://${container.getHost()}:${container.getMappedPort(27017)}`).connect();
  }, 180_000);
  afterAll(async () => {
    await client?.close();
    await container?.stop();
  });
  keyStoreContract('MongoKeyStore', async () => {
    const db = client.db(`turnout_keys_${randomUUID().slice(0, 8)}`);
    return { store: MongoKeyStore.on(db, main), reopen: async () => MongoKeyStore.on(db, main), cleanup: () => db.dropDatabase().then(() => undefined) };
  });
});
