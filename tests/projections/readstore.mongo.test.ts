import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { GenericContainer, type StartedTestContainer, Wait } from 'testcontainers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileFilter, MongoReadStore } from '../../projections/store/mongo.js';
import { eq } from '../../projections/store/port.js';
import { IMAGES } from '../support/containers.js';
import { dockerAvailable } from '../support/docker.js';
import { readStoreContract } from './readstore.contract.js';

const IMAGE = IMAGES.mongo;
const docker = await dockerAvailable();
if (!docker.ok) console.warn(`skipping MongoDB tests: no Docker engine reachable (${docker.reason})`);

describe.skipIf(!docker.ok)('the MongoDB read store (container)', () => {
  let container: StartedTestContainer;
  let url = '';
  let admin: MongoClient;
  /** A database per test, dropped after it, on one server for the suite. */
  const open = async () => {
    const dbName = `turnout_${randomUUID().slice(0, 8)}`;
    const store = await MongoReadStore.connect(url, dbName);
    return {
      store,
      db: admin.db(dbName),
      cleanup: async () => {
        await store.close();
        await admin.db(dbName).dropDatabase();
      },
    };
  };

  beforeAll(async () => {
    container = await new GenericContainer(IMAGE)
      .withExposedPorts(27017)
      .withWaitStrategy(Wait.forLogMessage(/Waiting for connections/))
      .withStartupTimeout(120_000)
      .start();
    url = `mongodb://${container.getHost()}:${container.getMappedPort(27017)}`;
    admin = await new MongoClient(url).connect();
  }, 180_000);

  afterAll(async () => {
    await admin?.close();
    await container?.stop();
  });

  readStoreContract('MongoReadStore', open);

  it('indexes the id field and every declared equality index', async () => {
    const { store, db, cleanup } = await open();
    try {
      await store.defineCollection({ name: 'people', idField: 'Pk', indexes: [['Team'], ['Team', 'Email']] });
      const indexes = await db.collection('people').listIndexes().toArray();
      expect(indexes.map((i) => i.key)).toEqual(expect.arrayContaining([{ Pk: 1 }, { Team: 1 }, { Team: 1, Email: 1 }]));
      expect(indexes.find((i) => i.key.Pk === 1)?.unique).toBe(true);
    } finally {
      await cleanup();
    }
  });

  it('answers an equality lookup from its index', async () => {
    const { store, db, cleanup } = await open();
    try {
      await store.defineCollection({ name: 'people', idField: 'Pk', indexes: [['Team']] });
      for (let i = 1; i <= 50; i++) await store.put('people', { Pk: i, Team: i % 5 });
      const plan = JSON.stringify(await db.collection('people').aggregate([{ $match: compileFilter(eq('Team', 3)) }]).explain());
      expect(plan).toContain('IXSCAN');
      expect(plan).toContain('Team_1');
    } finally {
      await cleanup();
    }
  });

  it('keeps checkpoints as text beside the read models, and refuses a read model of that name', async () => {
    const { store, db, cleanup } = await open();
    try {
      await store.setCheckpoint('read-models', { commit: 12n, prepare: 11n });
      expect(await db.collection('checkpoints').findOne({})).toEqual({ _id: 'read-models', position: '12/11' });
      await expect(store.defineCollection({ name: 'checkpoints', idField: 'Pk' })).rejects.toThrow(/reserved/);
    } finally {
      await cleanup();
    }
  });
});
