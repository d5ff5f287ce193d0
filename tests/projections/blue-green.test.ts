import type { Db, Document } from 'mongodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ANY } from '../../eventlog/port.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { readiness } from '../../api/routes/health.js';
import { buildOf, READ_MODEL_USERS, registerReadModels, summaryOf } from '../../projections/engine/builds.js';
import { StartCatchUp } from '../../projections/engine/catch-up.js';
import { ProjectionRunner } from '../../projections/engine/main-thread.js';
import type { Projector } from '../../projections/engine/projector.js';
import { versionedCheckpointName } from '../../projections/engine/step.js';
import { MongoReadStore } from '../../projections/store/mongo.js';
import { dropUnusedReadModels, planDrop, type Registration } from '../../projections/store/mongo-versions.js';
import { MemoryReadStore } from '../support/memory-store/memory.js';
import { count, event, leaseStore, tally } from '../support/runner-fixtures.js';
import { VersionOwnership, versionLeaseName } from '../../projections/engine/ownership.js';

/** A projector counting the events it applied, in a collection of its own. */
function counting(name: string, version: number): Projector & { applied: number } {
  const p = {
    name,
    version,
    applied: 0,
    collections: [{ name, idField: 'id' }],
    async apply(_e: unknown, store: Parameters<Projector['apply']>[1]) {
      p.applied++;
      await store.put(name, { id: 'n', applied: p.applied });
    },
  };
  return p;
}

describe('two builds over one shared store (a rolling deploy of a new read-model version)', () => {
  const closing: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of closing.splice(0)) await c();
  });

  it('builds the new version from the log\'s start while the old build\'s version stays where it is, each build with its own summary', async () => {
    const log = new SqliteEventLog(':memory:');
    const store = new MemoryReadStore();
    closing.push(() => log.close());
    const old = [counting('teams', 1), counting('people', 1)];
    const blue = new ProjectionRunner(log, store, old, { summary: summaryOf(old) });
    await blue.start();
    let last = null;
    for (let i = 0; i < 5; i++) last = (await log.append(`thing-${i}`, [event('Something')], ANY)).position;
    await blue.waitFor(last!);
    await blue.stop();

    const next = [counting('teams', 1), counting('people', 2)];
    expect(buildOf(next)).not.toBe(buildOf(old));
    const green = new ProjectionRunner(log, store, next, { summary: summaryOf(next) });
    closing.push(() => green.stop());
    await green.start();
    await green.waitFor(last!);
    // teams@1 is shared: green resumes it where blue left it; people@2 is new: built from the start.
    expect(next[0].applied).toBe(0);
    expect(next[1].applied).toBe(5);
    // Stored with the next batch (the memory store has no transactions).
    await vi.waitFor(async () => expect(await store.getCheckpoint(summaryOf(next))).toEqual(last));
    expect(await store.getCheckpoint(versionedCheckpointName(next[1]))).toEqual(last);
    expect(await store.getCheckpoint(versionedCheckpointName(old[1]))).toEqual(last);
    expect(await store.getCheckpoint(summaryOf(old))).toEqual(last);
  });

  it('writes the summary of a build whose versions are all built already at its start, not at the next event', async () => {
    const log = new SqliteEventLog(':memory:');
    const store = new MemoryReadStore();
    closing.push(() => log.close());
    const both = [counting('teams', 1), counting('people', 1)];
    const first = new ProjectionRunner(log, store, both, { summary: summaryOf(both) });
    await first.start();
    const at = (await log.append('thing-1', [event('Something')], ANY)).position;
    await first.waitFor(at);
    await first.stop();
    // A build that dropped a read model: all its versions are built, its summary is new.
    const fewer = [counting('teams', 1)];
    const second = new ProjectionRunner(log, store, fewer, { summary: summaryOf(fewer) });
    closing.push(() => second.stop());
    await second.start();
    expect(await store.getCheckpoint(summaryOf(fewer))).toEqual(at);
  });
});

describe('a process of a new build on the shared store', () => {
  it('is not ready (/readyz 503, read-models catching up) until its build\'s versions have reached the log\'s head at its start, whatever the old build\'s have', async () => {
    const log = new SqliteEventLog(':memory:');
    const store = new MemoryReadStore();
    const old = [counting('people', 1)];
    const next = [counting('people', 2)];
    let head = null;
    for (let i = 0; i < 3; i++) head = (await log.append(`thing-${i}`, [event('Something')], ANY)).position;
    // The old build's read models are current; the new build's are not built yet.
    await store.setCheckpoint(summaryOf(old), head!);
    const catchUp = new StartCatchUp();
    const runner = new ProjectionRunner(log, store, next, { summary: summaryOf(next) });
    try {
      void catchUp.followShared(log, store, summaryOf(next));
      const ready = () => readiness({ reachable: async () => {}, followers: async () => [catchUp.status()], starting: () => false });
      expect(await ready()).toMatchObject({ code: 503, body: { followers: [{ name: 'read-models', state: 'catching_up' }] } });

      // The new build's lease holder builds its versions from the log.
      await runner.start();
      await catchUp.pending();
      expect(await ready()).toMatchObject({ code: 200, body: { followers: [{ name: 'read-models', state: 'caught_up' }] } });
      expect(next[0].applied).toBe(3);
    } finally {
      catchUp.stop();
      await runner.stop();
      await log.close();
    }
  });
});

describe('registering the read models a process uses', () => {
  it('puts a registration naming its build, versions and collections, and takes it away at stop', async () => {
    const store = new MemoryReadStore();
    const ps = [counting('people', 2)];
    const registration = await registerReadModels(store, ps, 'host:1', () => undefined, () => new Date('2026-11-27T08:00:00Z'));
    expect(await store.get(READ_MODEL_USERS.name, 'host:1')).toEqual({
      id: 'host:1',
      build: buildOf(ps),
      projectors: [{ name: 'people', version: 2 }],
      collections: [{ name: 'people', version: 2 }],
      seenAt: new Date('2026-11-27T08:00:00Z'),
    });
    await registration.stop();
    expect(await store.get(READ_MODEL_USERS.name, 'host:1')).toBeNull();
  });
});

describe('versioned collections on MongoDB (scripted)', () => {
  it('keeps a read model under its version\'s name and reads and writes it by its own', async () => {
    const calls: Array<[string, string]> = [];
    const db = {
      collection: (name: string) => ({
        createIndexes: async () => void calls.push(['createIndexes', name]),
        find: () => (async function* () {})(),
        findOne: async () => (calls.push(['findOne', name]), null),
        replaceOne: async () => void calls.push(['replaceOne', name]),
      }),
    } as unknown as Db;
    const store = new MongoReadStore(db);
    await store.defineCollection({ name: 'people', idField: 'id', version: 2 });
    await store.defineCollection({ name: 'webhookDeliveries', idField: 'id' });
    await store.put('people', { id: 1 });
    await store.get('people', 1);
    await store.put('webhookDeliveries', { id: 1 });
    expect(calls).toEqual([
      ['createIndexes', 'people.v2'],
      ['createIndexes', 'webhookDeliveries'],
      ['replaceOne', 'people.v2'],
      ['findOne', 'people.v2'],
      ['replaceOne', 'webhookDeliveries'],
    ]);
  });
});

const registration = (build: string, versions: Array<[string, number]>, seenAt = new Date('2026-11-27T08:00:00Z')): Registration => ({
  build,
  projectors: versions.map(([name, version]) => ({ name, version })),
  collections: versions.map(([name, version]) => ({ name, version })),
  seenAt,
});

describe('a version two running builds share has one writer (a lease per projector version)', () => {
  it('is written by the build that holds its lease, the other build applying only its own, then by the new build once the old one stops', async () => {
    const log = new SqliteEventLog(':memory:');
    const store = new MemoryReadStore();
    const leases = leaseStore(300);
    const append = async (from: number, to: number) => {
      let last = null;
      for (let i = from; i < to; i++) last = (await log.append(`thing-${i}`, [event('Something')], ANY)).position;
      return last!;
    };
    const old = [tally('tally', 1), tally('people', 1)];
    const blue = new ProjectionRunner(log, store, old, { summary: summaryOf(old), ownership: new VersionOwnership(old, leases.contender('blue')) });
    await blue.start();
    await blue.waitFor(await append(0, 5));
    // The new build's projector starts while the old build's keeps running (a rolling deploy):
    // tally@1 is shared, people@2 is new.
    const next = [tally('tally', 1), tally('people', 2)];
    const green = new ProjectionRunner(log, store, next, { summary: summaryOf(next), ownership: new VersionOwnership(next, leases.contender('green')) });
    await green.start();
    expect(leases.holder(versionLeaseName(next[0]))).toBe('blue');
    expect(leases.holder(versionLeaseName(next[1]))).toBe('green');
    const last = await append(5, 10);
    await blue.waitFor(last);
    await green.waitFor(last);
    // Each event once: blue wrote the shared version, green its new one from the log's start.
    expect(await count(store, 'tally_v1')).toBe(10);
    expect(await count(store, 'people_v2')).toBe(10);
    // Checkpoints are stored with the next batch (the memory store has no transactions).
    await vi.waitFor(async () => expect(await store.getCheckpoint(versionedCheckpointName(next[1]))).toEqual(last), { timeout: 2_000 });
    // Green's summary passes a position only once the shared version's writer has: readers of the new build wait for both.
    await vi.waitFor(async () => expect(await store.getCheckpoint(summaryOf(next))).toEqual(last), { timeout: 2_000 });
    // The old build stops: its leases go, green takes the shared version over and resumes it where blue left it.
    await blue.stop();
    await vi.waitFor(() => expect(leases.holder(versionLeaseName(next[0]))).toBe('green'), { timeout: 2_000 });
    const after = await append(10, 15);
    await vi.waitFor(async () => expect(await store.getCheckpoint(versionedCheckpointName(next[0]))).toEqual(after), { timeout: 2_000 });
    expect(await count(store, 'tally_v1')).toBe(15);
    expect(await count(store, 'people_v2')).toBe(15);
    await green.stop();
    await log.close();
  });
});

describe('dropping the read models no running build uses (turnout rebuild --drop-unused)', () => {
  const legacy = new Set(['people', 'teams']);

  it('drops the versions and the unversioned layout no live registration names, and keeps every other collection', () => {
    const existing = ['people', 'people.v1', 'people.v2', 'teams.v1', 'webhookDeliveries', 'checkpoints', '_leases', 'readModelUsers'];
    const checkpoints = ['projector:people@v1', 'projector:people@v2', 'projector:teams@v1', 'read-models@aaa', 'read-models@bbb', 'read-models', 'projector:people', 'webhooks'];
    const plan = planDrop(existing, checkpoints, [registration('bbb', [['people', 2], ['teams', 1]])], legacy);
    // The layout before versions goes with its checkpoints (`projector:people`, `read-models`): a
    // release from before versions started again rebuilds its collections from the log rather
    // than resuming past the records they held.
    expect(plan).toEqual({ drop: ['people', 'people.v1'], keep: ['people.v2', 'teams.v1'], checkpoints: ['projector:people', 'projector:people@v1', 'read-models', 'read-models@aaa'] });
  });

  it('keeps what either of two live builds uses (mid-deploy)', () => {
    const plan = planDrop(['people.v1', 'people.v2', 'people.v3'], [], [registration('aaa', [['people', 1]]), registration('bbb', [['people', 2]])], legacy);
    expect(plan.drop).toEqual(['people.v3']);
  });

  /** A scripted Db: the registrations, the collections, and what was dropped. */
  function scriptedDb(registrations: Registration[], collections: string[]) {
    const dropped: string[] = [];
    const deleted: unknown[] = [];
    const reads: string[] = [];
    const db = {
      collection: (name: string) => ({
        find: (filter: Document) => ({
          toArray: async () => {
            reads.push(name);
            return name === 'readModelUsers' ? registrations.filter((r) => r.seenAt >= (filter.seenAt as { $gte: Date }).$gte) : [{ _id: 'projector:people@v1' }, { _id: 'projector:people@v2' }];
          },
        }),
        drop: async () => void dropped.push(name),
        deleteMany: async (filter: unknown) => void deleted.push(filter),
      }),
      listCollections: () => ({
        toArray: async () => {
          reads.push('listCollections');
          return collections.map((name) => ({ name }));
        },
      }),
    } as unknown as Db;
    return { db, dropped, deleted, reads };
  }

  it('drops only what no registration renewed within the live window names, with their checkpoints', async () => {
    const now = new Date('2026-11-27T08:10:00Z');
    const { db, dropped, deleted, reads } = scriptedDb(
      [registration('new', [['people', 2]], new Date('2026-11-27T08:09:30Z')), registration('old', [['people', 1]], new Date('2026-11-27T07:00:00Z'))],
      ['people.v1', 'people.v2', 'checkpoints'],
    );
    const plan = await dropUnusedReadModels(db, { users: 'readModelUsers', checkpoints: 'checkpoints', liveForMs: 90_000, legacy, now });
    // The collections listed before the registrations are read: a process registers before it
    // lays its collections out, so one starting meanwhile is seen by the later read.
    expect(reads).toEqual(['listCollections', 'checkpoints', 'readModelUsers']);
    expect(dropped).toEqual(['people.v1']);
    expect(plan.keep).toEqual(['people.v2']);
    expect(deleted).toEqual([{ _id: { $in: ['projector:people@v1'] } }]);
  });

  it('refuses, dropping nothing, when no process is registered at all', async () => {
    const { db, dropped } = scriptedDb([registration('old', [['people', 1]], new Date('2026-11-27T07:00:00Z'))], ['people.v1']);
    await expect(dropUnusedReadModels(db, { users: 'readModelUsers', checkpoints: 'checkpoints', liveForMs: 90_000, legacy, now: new Date('2026-11-27T08:10:00Z') })).rejects.toThrow(
      /no running process has registered.*nothing dropped/,
    );
    expect(dropped).toEqual([]);
  });
});
