import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { GenericContainer, type StartedTestContainer, Wait } from 'testcontainers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIVE_FOR_MS, READ_MODEL_USERS, registerReadModels } from '../../projections/engine/builds.js';
import { compileFilter, MongoReadStore } from '../../projections/store/mongo.js';
import { dropUnusedReadModels } from '../../projections/store/mongo-versions.js';
import { eq } from '../../projections/store/port.js';
import { cleanOtherVersions } from '../../runtime/erasure-versions.js';
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

  it('keeps two versions of a read model apart, one per build, and drops only the one no live process registered', async () => {
    const { store: blue, db, cleanup } = await open();
    const green = await MongoReadStore.connect(url, db.databaseName);
    try {
      await blue.defineCollection({ name: 'people', idField: 'Pk', version: 1 });
      await green.defineCollection({ name: 'people', idField: 'Pk', version: 2 });
      await blue.put('people', { Pk: 1, Name: 'old' });
      await green.put('people', { Pk: 1, Name: 'new' });
      expect(await blue.get('people', 1)).toEqual({ Pk: 1, Name: 'old' });
      expect(await green.get('people', 1)).toEqual({ Pk: 1, Name: 'new' });
      const registrations = await registerReadModels(green, [{ name: 'people', version: 2, collections: [{ name: 'people', idField: 'Pk' }], apply: async () => {} }], 'green', () => {});
      const plan = await dropUnusedReadModels(db, { users: READ_MODEL_USERS.name, checkpoints: 'checkpoints', liveForMs: LIVE_FOR_MS, legacy: new Set(['people']) });
      expect(plan.drop).toEqual(['people.v1']);
      const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
      expect(names).toContain('people.v2');
      expect(names).not.toContain('people.v1');
      await registrations.stop();
    } finally {
      await green.close();
      await cleanup();
    }
  });

  it("cleans an erased person from another version's collections: its own document removed, its copies nulled, another person's copies kept", async () => {
    const { store: blue, db, cleanup } = await open();
    const green = await MongoReadStore.connect(url, db.databaseName);
    try {
      const constituents = { name: 'constituents', idField: 'PkConstituent' };
      const volunteers = { name: 'volunteers', idField: 'PkVolunteer', search: [{ fields: ['ConstituentName', 'Email1'] }] };
      for (const [store, version] of [[blue, 1], [green, 2]] as const) {
        await store.defineCollection({ ...constituents, version });
        await store.defineCollection({ ...volunteers, version });
      }
      const copy = { ConstituentName: 'Mkc Name', Email1: 'Mkc@Example.org', _email1: 'mkc@example.org' };
      await blue.put('constituents', { PkConstituent: 7, FkTeam: 1, FirstName: 'Mkc', LastName: 'Name', Email1: 'Mkc@Example.org' });
      await blue.put('constituents', { PkConstituent: 8, FkTeam: 1, FirstName: 'Mkc', LastName: 'Name', Email1: 'other@example.org' });
      await blue.put('volunteers', { PkVolunteer: 1, FkTeam: 1, FkConstituent: 7, IsStudent: true, ...copy });
      await blue.put('volunteers', { PkVolunteer: 2, FkTeam: 1, FkConstituent: 8, ...copy, Email1: 'other@example.org', _email1: 'other@example.org' });
      const person = { team: 1, id: 7, values: ['Mkc', 'Name', 'Mkc Name', 'Mkc@Example.org'] };
      const shared = { store: green, collections: [constituents, volunteers] };
      expect(await cleanOtherVersions(shared, person, 1)).toBe(2);
      expect(await blue.get('constituents', 7)).toBeNull();
      expect(await blue.get('constituents', 8)).toMatchObject({ FirstName: 'Mkc', LastName: 'Name' });
      expect(await blue.get('volunteers', 1)).toMatchObject({ IsStudent: true, ConstituentName: null, Email1: null, _email1: null });
      expect(await blue.get('volunteers', 2)).toMatchObject({ ConstituentName: 'Mkc Name', Email1: 'other@example.org' });
      // The search grams went with the text.
      const grams = ((await db.collection('volunteers.v1').findOne({ _id: '1' as never }))?._ngrams ?? []) as string[];
      expect(grams.filter((g) => g.startsWith('ConstituentName:') || g.startsWith('Email1:'))).toEqual([]);
      expect(await cleanOtherVersions(shared, person, 1)).toBe(0);
    } finally {
      await green.close();
      await cleanup();
    }
  });

  it('offers no transactions on a standalone server (this container), so the step writes each checkpoint after its writes', async () => {
    const { store, cleanup } = await open();
    try {
      // The container is a standalone mongod: transactions need a replica set (docs: core/transactions).
      expect(await store.transactions()).toBeNull();
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
