import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ChangeFeed } from '../../dispatcher/feed.js';
import type { DeliveryQueue, DeliveryTask } from '../../dispatcher/queue/port.js';
import { ReplayRunner } from '../../dispatcher/replay-runner.js';
import { type Cursor, type FeedQuery, START, typeMatcher } from '../../dispatcher/feed-cursor.js';
import { FEED_MODEL, FeedModel, feedModelProjector } from '../../dispatcher/feed-model.js';
import { ENVELOPE_RULES } from '../../dispatcher/envelope.js';
import { buildOf, usedCollections } from '../../projections/engine/builds.js';
import { ProjectionRunner } from '../../projections/engine/main-thread.js';
import { defineReadModels } from '../../projections/engine/step.js';
import { planDrop } from '../../projections/store/mongo-versions.js';
import { MongoReadStore } from '../../projections/store/mongo.js';
import type { ReadStore } from '../../projections/store/port.js';
import { SqliteReadStore } from '../../projections/store/sqlite.js';
import { testConfig } from '../../runtime/config.js';
import { Erasure } from '../../runtime/erasure.js';
import { storeProjectors } from '../../runtime/store-models.js';
import { openRuntime } from '../../runtime/wiring.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { MemoryReadStore } from '../support/memory-store/memory.js';
import { scriptedMongo } from '../support/scripted-mongo.js';
import { tempDirs } from '../support/temp-dirs.js';
import { taskTeam, type TaskTeam, writeMixedChanges } from '../api/volunteer-support.js';

/** The feed collection's version in this build (1, plus the envelopes' own rules: dispatcher/envelope.ts). */
const V = `v${1 + ENVELOPE_RULES}`;

/**
 * The change feed's read model (dispatcher/feed-model.ts) on every read store that keeps it: the
 * memory store, the SQLite store in memory (the in-process topology's), and MongoDB through a
 * scripted collection. Kept by its projector from a real log, it must answer every page exactly
 * as the feed built from the log answers it: envelopes byte for byte, `next` and `hasMore`, by
 * page size, type, `until` and time window.
 */
let t: TestApp;
let team: TaskTeam;
let other: TaskTeam;

beforeAll(async () => {
  t = await startTestApp();
  other = await taskTeam(t);
  team = await taskTeam(t);
  await other.volunteer('Zed');
  await writeMixedChanges(team);
  await other.api.post('/constituents', { FirstName: 'Late', LastName: 'Other' });
  await writeMixedChanges(team);
}, 60_000);
afterAll(() => t.close());

const settled = async () => undefined;

/** Every page from `after`, each as {changes, next, hasMore}. */
async function pages(read: (q: FeedQuery) => Promise<{ changes: string[]; next: Cursor; hasMore: boolean }>, q: Omit<FeedQuery, 'after'>, after: Cursor = START) {
  const out = [];
  for (;;) {
    const page = await read({ ...q, after });
    out.push(page);
    if (!page.hasMore) return out;
    after = page.next;
  }
}

/** Keeps the store's feed from the app's log with a runner of its own, as a lease holder would. */
async function projected(store: ReadStore) {
  const log = t.runtime.services.log;
  const runner = new ProjectionRunner(log, store, [feedModelProjector(log)]);
  await runner.start();
  await runner.waitFor((await log.head())!);
  return runner;
}

const stores: Array<[string, () => { store: ReadStore; mongo?: ReturnType<typeof scriptedMongo> }]> = [
  ['the memory store', () => ({ store: new MemoryReadStore() })],
  ['the SQLite store in memory', () => ({ store: new SqliteReadStore(':memory:') })],
  [
    'MongoDB (scripted collection)',
    () => {
      const mongo = scriptedMongo();
      return { store: new MongoReadStore(mongo.db), mongo };
    },
  ],
];

describe.each(stores)('the change feed read model on %s', (_name, make) => {
  it('answers every page exactly as the feed built from the log does', async () => {
    const { store } = make();
    const runner = await projected(store);
    try {
      const model = new FeedModel(store, settled);
      const fromLog = new ChangeFeed(t.runtime.services.log);
      const same = async (q: Omit<FeedQuery, 'after'>, after?: Cursor) =>
        expect(await pages((p) => model.page(team.id, p), q, after)).toEqual(await pages((p) => fromLog.page(team.id, p), q, after));
      const all = await pages((p) => fromLog.page(team.id, p), { types: null, limit: 1000 });
      expect(all[0].changes.length).toBeGreaterThanOrEqual(16);
      for (const limit of [1000, 1, 3]) await same({ types: null, limit });
      await same({ types: typeMatcher('volunteer_task.*,constituent.updated'), limit: 2 });
      await same({ types: typeMatcher('donation.*'), limit: 5 });
      const middle = (await fromLog.page(team.id, { after: START, types: null, limit: 5 })).next;
      await same({ types: null, limit: 4 }, middle);
      await same({ types: null, limit: 4, until: (await fromLog.page(team.id, { after: START, types: null, limit: 9 })).next });
      // The second of the seventh change: some of the team's changes, if not all, fall in it.
      const at = JSON.parse(all[0].changes[6]).created * 1000;
      await same({ types: null, limit: 3, at: { from: at, to: at + 999 } });
      const now = await fromLog.now();
      expect(await model.page(team.id, { after: now, types: null, limit: 10 })).toEqual({ changes: [], next: now, hasMore: false });
      await fromLog.close();
    } finally {
      await runner.stop();
    }
  });

  it('is idempotent: the log applied again from its start changes nothing', async () => {
    const { store } = make();
    const runner = await projected(store);
    await runner.stop();
    const model = new FeedModel(store, settled);
    const before = await pages((p) => model.page(team.id, p), { types: null, limit: 7 });
    await store.setCheckpoint(`projector:change-feed@${V}`, { commit: 0n, prepare: 0n });
    const again = await projected(store);
    await again.stop();
    expect(await pages((p) => model.page(team.id, p), { types: null, limit: 7 })).toEqual(before);
  });
});

describe('the change feed read model on MongoDB (scripted collection)', () => {
  it('reads a page as one find on the team and the envelope number, sorted by it, one past the page, counting nothing', async () => {
    const mongo = scriptedMongo();
    const store = new MongoReadStore(mongo.db);
    const runner = await projected(store);
    await runner.stop();
    mongo.calls.length = 0;
    const page = await new FeedModel(store, settled).page(team.id, { after: START, types: typeMatcher('constituent.*'), limit: 2 });
    expect(page.changes).toHaveLength(2);
    expect(mongo.calls.map((c) => [c.collection, c.op])).toEqual([[`changeFeed.${V}`, 'find']]);
    const [filter, , cursor] = mongo.calls[0].args as [unknown, unknown, { sort: unknown; limit: number }];
    expect(filter).toEqual({
      $and: [{ team: { $eq: team.id } }, { seq: { $gte: '00000000000000000000' } }, { type: { $in: ['constituent.created', 'constituent.updated', 'constituent.deleted', 'constituent.erased'] } }],
    });
    expect(cursor).toMatchObject({ sort: { seq: 1 }, limit: 3 });
  });

  it('is rewritten by an erasure, in the same operation: no erased value left in the collection, every envelope as the log now builds it', async () => {
    const mongo = scriptedMongo();
    const store = new MongoReadStore(mongo.db);
    const runner = await projected(store);
    try {
      const marked = await team.api.post('/constituents', { FirstName: 'Mkfirstfeed', LastName: 'Mklastfeed', Email1: 'mkfeed@example.org' });
      const id = marked.body.constituent.PkConstituent as number;
      await team.api.patch(`/constituents/${id}`, { MailingCity: 'Mkcityfeed' });
      await team.api.post('/volunteers', { FkConstituent: id });
      const { services } = t.runtime;
      await runner.waitFor((await services.log.head())!);
      const text = () => JSON.stringify(mongo.documents(`${FEED_MODEL.name}.${V}`));
      expect(text()).toContain('Mklastfeed');
      // The erasure as a process beside the lease holder runs it: its settle waits for the shared store.
      const erasure = new Erasure({
        deps: {
          ...services,
          settle: async (p) => {
            await services.settle(p);
            if (p) await runner.waitFor(p);
          },
        },
        dataDir: ':memory:',
        mainSealer: services.mainSealer,
        feedModel: new FeedModel(store, settled),
        webhookDb: null,
        idempotency: services.idempotency,
        readModelsFile: null,
        report: () => undefined,
      });
      await erasure.erase({ team: team.id, source: 'Application', keyName: null, correlationId: 'erase-feed', now: new Date() }, id, null);
      erasure.close();
      for (const mark of ['Mkfirstfeed', 'Mklastfeed', 'mkfeed@example.org', 'Mkcityfeed']) expect(text()).not.toContain(mark);
      await runner.waitFor((await services.log.head())!);
      const fromLog = new ChangeFeed(services.log);
      const model = new FeedModel(store, settled);
      const expected = await pages((p) => fromLog.page(team.id, p), { types: null, limit: 1000 });
      expect(await pages((p) => model.page(team.id, p), { types: null, limit: 1000 })).toEqual(expected);
      const mine = expected.flatMap((p) => p.changes.map((c) => JSON.parse(c))).filter((e) => e.data.PkConstituent === id);
      expect(mine.map((e) => e.type)).toEqual(['constituent.created', 'constituent.updated', 'constituent.erased']);
      expect(mine.every((e) => e.erased === true && (e.data.LastName ?? null) === null)).toBe(true);
      await fromLog.close();
    } finally {
      await runner.stop();
    }
  });
});

describe('the change feed read model among the others on MongoDB (blue/green)', () => {
  it('is laid out under its version, part of the build, registered as used, and dropped by --drop-unused only once no live build names its version', async () => {
    const mongo = scriptedMongo();
    const models = storeProjectors(t.runtime.services.log);
    await defineReadModels(new MongoReadStore(mongo.db), models);
    expect(mongo.calls.filter((c) => c.op === 'createIndexes' && c.collection.startsWith('changeFeed')).map((c) => c.collection)).toEqual([`changeFeed.${V}`]);
    const withoutFeed = models.filter((p) => p.name !== 'change-feed');
    expect(buildOf(models)).not.toBe(buildOf(withoutFeed));
    const live = (ps: typeof models) => [{ build: buildOf(ps), projectors: ps.map((p) => ({ name: p.name, version: p.version })), collections: usedCollections(ps), seenAt: new Date() }];
    const existing = ['changeFeed.v0', `changeFeed.${V}`];
    expect(planDrop(existing, [], live(models), new Set()).drop).toEqual(['changeFeed.v0']);
    // A build before the feed's read model, alone: the feed's collections are no one's.
    expect(planDrop(existing, [`projector:change-feed@${V}`], live(withoutFeed), new Set())).toMatchObject({ drop: ['changeFeed.v0', `changeFeed.${V}`], checkpoints: [`projector:change-feed@${V}`] });
  });
});

describe('an erasure stopped before the change feed\u2019s read model was rewritten (MongoDB, scripted collection)', () => {
  const tempDir = tempDirs('turnout-feed-erasure-');
  it('is finished at the next start: the journal\u2019s resume rewrites the collection', async () => {
    const mongo = scriptedMongo();
    const store = new MongoReadStore(mongo.db);
    const runner = await projected(store);
    const dataDir = tempDir();
    try {
      const { services } = t.runtime;
      const id = (await team.api.post('/constituents', { FirstName: 'Mkresumefirst', LastName: 'Mkresumelast' })).body.constituent.PkConstituent as number;
      // A linked copy of the name (the volunteer's envelope): the erasure's to rewrite, not the projector's.
      expect((await team.api.post('/volunteers', { FkConstituent: id })).status).toBe(201);
      await runner.waitFor((await services.log.head())!);
      const text = () => JSON.stringify(mongo.documents(`${FEED_MODEL.name}.${V}`));
      expect(text()).toContain('Mkresumelast');
      const stores = (feedModel: FeedModel) => ({
        deps: { ...services, settle: async (p: Parameters<typeof services.settle>[0]) => (await services.settle(p), p ? runner.waitFor(p) : undefined) },
        dataDir,
        mainSealer: services.mainSealer,
        feedModel,
        webhookDb: null,
        idempotency: services.idempotency,
        readModelsFile: null,
        report: () => undefined,
      });
      // The process dies in the feed step: the store's first write fails, as a lost connection would.
      const dying = new FeedModel({ ...store, scan: store.scan.bind(store), put: async () => Promise.reject(new Error('connection lost')) } as unknown as ReadStore, settled);
      const first = new Erasure(stores(dying));
      await expect(first.erase({ team: team.id, source: 'Application', keyName: null, correlationId: 'erase-resume', now: new Date() }, id, null)).rejects.toThrow(/recorded but not finished/);
      expect(first.pending()).toMatchObject([{ PkConstituent: id, attempts: 1, lastError: 'connection lost', lastStep: 'log' }]);
      first.close();
      // The projector rebuilt the person's own envelopes as it applied the erasure; the volunteer's copy is left.
      const left = mongo.documents(`${FEED_MODEL.name}.${V}`).filter((d) => String(d.json).includes('Mkresumelast'));
      expect(left.map((d) => d.type)).toEqual(['volunteer.created']);
      const next = new Erasure(stores(new FeedModel(store, settled)));
      expect(next.status()).toMatchObject({ name: 'erasures', behind: 1 });
      await next.resume();
      expect(next.status()).toBeNull();
      next.close();
      expect(text()).not.toContain('Mkresumelast');
      expect(text()).not.toContain('Mkresumefirst');
    } finally {
      await runner.stop();
    }
  });
});

describe('the change feed of a runtime whose read models are in memory (the in-process topology)', () => {
  it('is served from the read model, reading no event of the log: pages, a long poll, the export and a webhook replay', async () => {
    const { services } = t.runtime;
    expect(services.feedModel).toBeDefined();
    expect(services.feedTable).toBeUndefined();
    const log = services.log as { readTeam?: unknown };
    const readTeam = log.readTeam;
    log.readTeam = () => {
      throw new Error('the feed read the log');
    };
    try {
      const page = await team.api.get('/changes?limit=5');
      expect(page.status, page.raw).toBe(200);
      expect(page.body.changes).toHaveLength(5);
      const waiting = team.api.get(`/changes?after=${(await team.api.get('/changes?after=now')).body.next}&wait=20`);
      const written = await team.api.post('/constituents', { FirstName: 'Polled', LastName: 'Model' });
      expect((await waiting).body.changes.map((e: any) => e.data.PkConstituent)).toEqual([written.body.constituent.PkConstituent]);
      const exported = await team.admin.get(`/export?from=${page.body.next}`);
      expect(exported.status, exported.raw).toBe(200);
      expect(exported.raw.trim().split('\n').length).toBeGreaterThan(10);
      // A webhook replay reads the same pages (runtime/webhooks.ts gives its runner the read model).
      const { deliveries, replays, webhooks } = services;
      const ep = (await team.admin.post('/webhook-endpoints', { url: 'http://127.0.0.1:9/none', events: ['constituent.created'] })).body.webhookEndpoint.id;
      const queued: DeliveryTask[] = [];
      const queue = { add: async (tasks: DeliveryTask[]) => void queued.push(...tasks) } as unknown as DeliveryQueue;
      const job = await webhooks.replay(team.id, ep, { from: '2000-01-01T00:00:00Z' });
      const replaying = new ReplayRunner({ log: services.log, queue, deliveries, replays, feed: services.feedModel });
      replaying.start();
      try {
        await vi.waitFor(() => expect(queued.length).toBeGreaterThanOrEqual(5), { timeout: 15_000 });
        expect(queued.every((q) => q.eventType === 'constituent.created')).toBe(true);
        expect((await replays.get(job.id))?.error ?? null).toBeNull();
      } finally {
        await replaying.stop();
      }
    } finally {
      log.readTeam = readTeam;
    }
  });
});

describe('the bench switch TURNOUT_BENCH_FEED (bench/sealing.ts)', () => {
  const tempDir = tempDirs('turnout-bench-feed-');
  it('serves the feed built from the log only with TURNOUT_BENCH_FEED=log beside TURNOUT_BENCH_LOG, and refuses it alone', async () => {
    const feedOf = async (env: NodeJS.ProcessEnv) => {
      const runtime = await openRuntime(testConfig({ dataDir: tempDir() }), { env });
      try {
        return { model: Boolean(runtime.services.feedModel), table: Boolean(runtime.services.feedTable) };
      } finally {
        await runtime.close();
      }
    };
    expect(await feedOf({ TURNOUT_BENCH_LOG: 'port' })).toEqual({ model: true, table: false });
    expect(await feedOf({ TURNOUT_BENCH_LOG: 'sealed', TURNOUT_BENCH_FEED: 'log' })).toEqual({ model: false, table: false });
    await expect(feedOf({ TURNOUT_BENCH_FEED: 'log' })).rejects.toThrow(/TURNOUT_BENCH_FEED/);
  });
});
