import type { ClientSession, Db, Document, MongoClient } from 'mongodb';
import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../domain/shared/events.js';
import type { Projector } from '../../projections/engine/projector.js';
import { checkpointName, ProjectionStep } from '../../projections/engine/step.js';
import { MongoReadStore } from '../../projections/store/mongo.js';

/**
 * A scripted MongoDB: `hello` answers as a replica set member or a standalone server, the client
 * runs a session's transaction by calling its callback, and every write records the options it
 * was given, so the tests see which operations ran in the session.
 */
function scripted(hello: Document) {
  const writes: Array<{ op: string; collection: string; options: Document | undefined }> = [];
  const session = { id: 'session-1' } as unknown as ClientSession;
  let committed = 0;
  const collection = (name: string) => ({
    createIndexes: async () => undefined,
    find: () => (async function* () {})(),
    findOne: async (_filter: Document, options?: Document) => (writes.push({ op: 'findOne', collection: name, options }), null),
    replaceOne: async (_f: Document, _d: Document, options?: Document) => void writes.push({ op: 'replaceOne', collection: name, options }),
    updateOne: async (_f: Document, _u: Document, options?: Document) => (writes.push({ op: 'updateOne', collection: name, options }), { upsertedCount: 1 }),
  });
  const db = { collection, command: async () => hello } as unknown as Db;
  const client = {
    withSession: async (fn: (s: ClientSession) => Promise<unknown>) => fn(session),
  } as unknown as MongoClient;
  (session as unknown as { withTransaction: (fn: () => Promise<unknown>) => Promise<unknown> }).withTransaction = async (fn) => {
    const result = await fn();
    committed++;
    return result;
  };
  return { store: new MongoReadStore(db, client), writes, session, committed: () => committed };
}

const people: Projector = {
  name: 'people',
  version: 1,
  collections: [{ name: 'people', idField: 'id' }],
  apply: async (e, store) => store.put('people', { id: String(e.position.commit) }),
};

const event: RecordedEvent = {
  stream: 'person-1',
  type: 'PersonAdded',
  revision: 0n,
  position: { commit: 7n, prepare: 7n },
  data: {},
  metadata: { team: 1, source: 'Application' as const, keyName: null, correlationId: 'c', at: '2024-05-01T12:00:00.000Z' },
};

describe('MongoDB transactions for the projection step', () => {
  it('runs a step in one session transaction on a replica set: the projector\'s writes and its checkpoint all in the session', async () => {
    const { store, writes, session, committed } = scripted({ isWritablePrimary: true, setName: 'rs0' });
    await store.defineCollection(people.collections[0]);
    const step = new ProjectionStep([people], { summary: 'read-models' });
    const { transaction } = await step.run(store, async (tx) => {
      await step.load(tx);
      await step.apply([event], tx);
      step.advance(event.position);
      await step.save(tx);
    });
    expect(transaction).toBe(true);
    expect(committed()).toBe(1);
    expect(writes.map((w) => [w.op, w.collection])).toEqual([
      ['findOne', 'checkpoints'],
      ['findOne', 'checkpoints'],
      ['replaceOne', 'people'],
      ['updateOne', 'checkpoints'],
      ['updateOne', 'checkpoints'],
    ]);
    for (const w of writes) expect(w.options?.session, `${w.op} ${w.collection}`).toBe(session);
    expect(writes.filter((w) => w.op === 'updateOne').length).toBe(2);
    expect(checkpointName(people)).toBe('projector:people');
  });

  it('offers none on a standalone server, nor without a client: the step then writes outside any session', async () => {
    const { store, writes } = scripted({ isWritablePrimary: true });
    expect(await store.transactions()).toBeNull();
    const step = new ProjectionStep([people]);
    await store.defineCollection(people.collections[0]);
    const { transaction } = await step.run(store, async (s) => {
      await step.load(s);
      await step.apply([event], s);
    });
    expect(transaction).toBe(false);
    expect(writes.every((w) => w.options?.session === undefined)).toBe(true);
    const unconnected = new MongoReadStore({ collection: () => ({}) } as unknown as Db);
    expect(await unconnected.transactions()).toBeNull();
  });

  it('counts a sharded cluster\'s router (mongos) as offering them', async () => {
    const { store } = scripted({ isWritablePrimary: true, msg: 'isdbgrid' });
    expect(await store.transactions()).not.toBeNull();
  });
});
