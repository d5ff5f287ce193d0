import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromLog } from '../../domain/events.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import type { EventLog } from '../../eventlog/port.js';
import { openLogReader } from '../../eventlog/sqlite-file.js';
import { CONSTITUENTS, constituentsProjection } from '../../projections/constituents.js';
import { SqliteProjection } from '../../projections/engine/sqlite-step.js';
import { EVENT_TICKETS, eventTicketsProjector, type LinkedStreams } from '../../projections/event-tickets.js';
import { EVENTS, eventsProjection } from '../../projections/events.js';
import { MongoReadStore } from '../../projections/store/mongo.js';
import { type Doc, eq, type ReadStore } from '../../projections/store/port.js';
import { SqliteReadCore } from '../../projections/store/sqlite-core.js';
import { SqliteReadStore } from '../../projections/store/sqlite.js';
import { LOG_FILE, READ_MODELS_FILE } from '../../runtime/read-models.js';
import { loadProjectors } from '../../runtime/thread-projectors.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { MemoryReadStore } from '../support/memory-store/memory.js';
import { scriptedMongo } from '../support/scripted-mongo.js';
import { tempDirs } from '../support/temp-dirs.js';

/**
 * decisions.md §6: a ticket sale reads EventTitle and PurchaserName, the names its event and
 * purchaser had when it was made, following their later renames; a deleted one leaves the name
 * the sale had, an erased purchaser's reads null (§17). The ticket read model must read the same
 * when it is replayed alone (its version raised: engine/sqlite-step.ts prepare drops and replays
 * it alone; a new version built beside the others on MongoDB; a prepare of it alone), beside
 * events and constituents as they stand at the log's head, where the deleted ones are gone.
 */

const tempDir = tempDirs('turnout-tickets-alone-');

/** Sales made by `setUp`, with the names the live app showed for each. */
interface Sales {
  team: number;
  /** Event and purchaser both deleted since the sale (the review's case, and a deleted purchaser). */
  deleted: number;
  /** Both renamed after the sale, then deleted. */
  renamedThenDeleted: number;
  /** Both renamed before the sale, then deleted. */
  renamedBeforeDeleted: number;
  /** Purchaser renamed after the sale, then erased; the event renamed, left in place. */
  erased: number;
  /** Purchaser deleted, then erased; the event deleted. */
  deletedThenErased: number;
  /** Event and purchaser still there (the look-up answers: no log read). */
  kept: number;
  /** The streams of the records deleted or erased. */
  gone: string[];
}

type Team = Awaited<ReturnType<TestApp['team']>>;

async function setUp(t: TestApp): Promise<Sales> {
  const team: Team = await t.team();
  const api = team.api.Integration;
  const event = async (EventTitle: string) => (await api.post('/events', { EventTitle })).body.event.PkEvent as number;
  const person = async (FirstName: string, LastName: string) => (await api.post('/constituents', { FirstName, LastName })).body.constituent.PkConstituent as number;
  const sale = async (FkEvent: number, FkConstituent: number) => {
    const r = await team.admin.post('/event-tickets', { FkEvent, FkConstituent, GrossAmount: 5 });
    expect(r.status, r.raw).toBe(201);
    return r.body.eventTicket.PkEventTicket as number;
  };
  const ok = async (r: Promise<{ status: number; raw: string }>) => {
    const done = await r;
    expect(done.status, done.raw).toBe(200);
  };
  const gone: string[] = [];
  const delEvent = async (id: number) => (await ok(team.admin.del(`/events/${id}`)), gone.push(`event-${id}`));
  const delPerson = async (id: number) => (await ok(team.admin.del(`/constituents/${id}`)), gone.push(`constituent-${id}`));
  const erase = async (id: number) => (await ok(team.admin.post(`/constituents/${id}/erase`, {})), gone.push(`constituent-${id}`));

  const e1 = await event('Spring Gala');
  const c1 = await person('Ada', 'Lovelace');
  const deleted = await sale(e1, c1);
  await delEvent(e1);
  await delPerson(c1);

  const e2 = await event('Winter Fair');
  const c2 = await person('Grace', 'Hopper');
  const renamedThenDeleted = await sale(e2, c2);
  await ok(api.patch(`/events/${e2}`, { EventTitle: 'Winter Market' }));
  await ok(api.patch(`/constituents/${c2}`, { LastName: 'Brewster' }));
  await delEvent(e2);
  await delPerson(c2);

  const e3 = await event('Old Title');
  const c3 = await person('Alan', 'Turing');
  await ok(api.patch(`/events/${e3}`, { EventTitle: 'New Title' }));
  await ok(api.patch(`/constituents/${c3}`, { FirstName: 'Alan M.' }));
  const renamedBeforeDeleted = await sale(e3, c3);
  // A later event of the deleted stream: the sale takes its names as they were at the sale.
  await delEvent(e3);
  await delPerson(c3);

  const e4 = await event('Autumn Ball');
  const c4 = await person('Erin', 'Erased');
  const erased = await sale(e4, c4);
  await ok(api.patch(`/constituents/${c4}`, { LastName: 'Renamed' }));
  await ok(api.patch(`/events/${e4}`, { EventTitle: 'Autumn Dance' }));
  await erase(c4);

  const e5 = await event('Summer Fete');
  const c5 = await person('Dana', 'Gone');
  const deletedThenErased = await sale(e5, c5);
  await delEvent(e5);
  await delPerson(c5);
  await erase(c5);

  const e6 = await event('Kept Gala');
  const c6 = await person('Kim', 'Kept');
  const kept = await sale(e6, c6);
  await ok(api.patch(`/events/${e6}`, { EventTitle: 'Kept Gala II' }));

  return { team: team.id, deleted, renamedThenDeleted, renamedBeforeDeleted, erased, deletedThenErased, kept, gone };
}

/** What the live app shows of each sale. */
const LIVE_NAMES = (s: Sales) => ({
  [s.deleted]: { EventTitle: 'Spring Gala', PurchaserName: 'Ada Lovelace' },
  [s.renamedThenDeleted]: { EventTitle: 'Winter Market', PurchaserName: 'Grace Brewster' },
  [s.renamedBeforeDeleted]: { EventTitle: 'New Title', PurchaserName: 'Alan M. Turing' },
  [s.erased]: { EventTitle: 'Autumn Dance', PurchaserName: null },
  [s.deletedThenErased]: { EventTitle: 'Summer Fete', PurchaserName: null },
  [s.kept]: { EventTitle: 'Kept Gala II', PurchaserName: 'Kim Kept' },
});

const namesOf = (docs: Doc[]) => Object.fromEntries(docs.map((d) => [d.PkEventTicket as number, { EventTitle: d.EventTitle, PurchaserName: d.PurchaserName }]));

const salesOf = async (store: ReadStore, team: number) => (await store.find({ collection: EVENT_TICKETS, filter: eq('FkTeam', team), sort: [{ field: 'PkEventTicket', dir: 'asc' }] })).items;

/** The log's stream reads, each stream read noted in `read`. */
function noting(log: LinkedStreams, read: string[], until = true): LinkedStreams {
  return {
    readStream: (s) => (read.push(s), log.readStream(s)),
    ...(until && log.readStreamUntil ? { readStreamUntil: (s, p) => (read.push(s), log.readStreamUntil!(s, p)) } : {}),
  };
}

describe('ticket sales replayed alone, beside events and constituents at the log\'s head', () => {
  let t: TestApp;
  let sales: Sales;
  let live: Doc[];
  beforeAll(async () => {
    t = await startTestApp();
    sales = await setUp(t);
    live = await salesOf(t.runtime.services.store, sales.team);
  }, 60_000);
  afterAll(() => t?.close());

  it('shows live the names each sale had, following later renames, null for an erased purchaser', () => {
    expect(namesOf(live)).toEqual(LIVE_NAMES(sales));
  });

  /** Replays the ticket projector alone over `store`, which holds the events and constituents as they stand now. */
  async function replayAlone(store: ReadStore, log: LinkedStreams): Promise<void> {
    const tickets = eventTicketsProjector(log);
    for (const p of [constituentsProjection, eventsProjection, tickets]) for (const c of p.collections) await store.defineCollection(c);
    const now = t.runtime.services.store;
    for (const c of [EVENTS, CONSTITUENTS]) for (const d of (await now.find({ collection: c, filter: eq('FkTeam', sales.team) })).items) await store.put(c, d);
    const events: EventLog = t.runtime.services.log;
    const head = (await events.head())!;
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    const sub = events.subscribe(null, async (e: RecordedEvent) => {
      const category = e.stream.slice(0, e.stream.indexOf('-'));
      if ((tickets.categories as readonly string[]).includes(category)) await tickets.apply(fromLog(e) as never, store);
      if (e.position.commit === head.commit && e.position.prepare === head.prepare) done();
    });
    await finished;
    await sub.stop();
  }

  const stores: Array<[string, () => ReadStore]> = [
    ['the memory store', () => new MemoryReadStore()],
    ['SQLite', () => new SqliteReadStore(':memory:')],
    ['MongoDB (scripted)', () => new MongoReadStore(scriptedMongo().db)],
  ];
  for (const [name, make] of stores) {
    it(`reads as live on ${name}, reading the log only for the records deleted or erased since`, async () => {
      const store = make();
      const read: string[] = [];
      await replayAlone(store, noting(t.runtime.services.log, read));
      expect(namesOf(await salesOf(store, sales.team))).toEqual(LIVE_NAMES(sales));
      expect(await salesOf(store, sales.team)).toEqual(live);
      expect([...new Set(read)].sort()).toEqual([...new Set(sales.gone)].sort());
      await store.close();
    });
  }

  it('reads as live from a log that cannot read a stream up to a position (the whole stream, folded up to the sale)', async () => {
    const store = new MemoryReadStore();
    await replayAlone(store, noting(t.runtime.services.log, [], false));
    expect(await salesOf(store, sales.team)).toEqual(live);
  });
});

describe('ticket sales rebuilt alone by the projector thread\'s engine (the read model\'s version raised)', () => {
  it('keeps the names the live app showed, as a build of every read model does', async () => {
    const dir = tempDir();
    const t = await startTestApp({ dataDir: dir });
    let sales: Sales;
    try {
      sales = await setUp(t);
    } finally {
      await t.close();
    }
    const log = openLogReader(path.join(dir, LOG_FILE));
    const core = new SqliteReadCore(path.join(dir, READ_MODELS_FILE));
    try {
      const projectors = await loadProjectors(undefined, { db: core.db, log });
      const store = new SqliteReadStore(core);
      const asLive = new SqliteProjection(core, projectors, log);
      expect(asLive.prepare()).toEqual([]);
      const before = await salesOf(store, sales.team);
      expect(namesOf(before)).toEqual(LIVE_NAMES(sales));

      const raised = projectors.map((p) => (p.name === EVENT_TICKETS ? { ...p, version: p.version + 1 } : p));
      const alone = new SqliteProjection(core, raised, log);
      expect(alone.prepare()).toEqual([EVENT_TICKETS]);
      expect(await salesOf(store, sales.team)).toEqual([]);
      while (!(await alone.step()).caughtUp);
      expect(await salesOf(store, sales.team)).toEqual(before);
    } finally {
      core.close();
      log.close();
    }
  }, 60_000);
});
