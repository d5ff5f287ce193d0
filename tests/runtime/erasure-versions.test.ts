import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectionRunner } from '../../projections/engine/main-thread.js';
import type { Projector } from '../../projections/engine/projector.js';
import { defineReadModels } from '../../projections/engine/step.js';
import { constituentsProjection } from '../../projections/constituents.js';
import { volunteersProjection } from '../../projections/volunteers.js';
import { MongoReadStore } from '../../projections/store/mongo.js';
import { NGRAMS } from '../../projections/store/mongo-search.js';
import { Erasure } from '../../runtime/erasure.js';
import { cleanOtherVersions, type SharedReadModels } from '../../runtime/erasure-versions.js';
import { storeProjectors } from '../../runtime/store-models.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { scriptedMongo } from '../support/scripted-mongo.js';

/**
 * decisions.md §17 across builds sharing one MongoDB store (a blue/green deploy): an erasure
 * served by this build leaves no erased value in the read-model collections of another version
 * (here an older build's `constituents.v2` and `volunteers.v1`, stopped before the erasure, so
 * that its own projectors never apply ConstituentErased), and touches no one else's values there.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

type Docs = Array<Record<string, unknown>>;
const OLD_CONSTITUENTS = 'constituents.v2';
const OLD_VOLUNTEERS = 'volunteers.v1';

/** The read models of this build on `mongo`, as wiring.ts hands them to the erasure. */
async function thisBuild(mongo: ReturnType<typeof scriptedMongo>): Promise<SharedReadModels> {
  const store = new MongoReadStore(mongo.db);
  const models = storeProjectors(t.runtime.services.log);
  await defineReadModels(store, models);
  return { store, collections: models.flatMap((p) => p.collections) };
}

function erasureOf(readModels: SharedReadModels): Erasure {
  const { services } = t.runtime;
  return new Erasure({
    deps: services,
    dataDir: ':memory:',
    mainSealer: services.mainSealer,
    readModels,
    webhookDb: null,
    idempotency: services.idempotency,
    readModelsFile: null,
    report: () => undefined,
  });
}

describe('an erasure and the read-model collections of other versions (MongoDB blue/green)', () => {
  it("removes the person's own document and nulls its linked copies in an older build's collections, keeps everyone else's, and does it again harmlessly", async () => {
    const mongo = scriptedMongo();
    const log = t.runtime.services.log;
    // The build before this one: older versions of the constituents and volunteers read models.
    const older: Projector[] = [{ ...constituentsProjection, version: 2 }, { ...volunteersProjection, version: 1 } as Projector];
    const oldRunner = new ProjectionRunner(log, new MongoReadStore(mongo.db), older);
    await oldRunner.start();
    const team = await t.team();
    const api = team.api.Integration;
    // The control shares the person's name (so its copies hold the same text) and city, not its contacts.
    const shared = { FirstName: 'Mkvfirst', LastName: 'Mkvlast', MailingCity: 'Mkvsharedcity' };
    const person = (await api.post('/constituents', { ...shared, Email1: 'mkv.old@example.org', Phone1: '555-867-5309', Nickname: 'Mkvnick' })).body.constituent.PkConstituent as number;
    const control = (await api.post('/constituents', { ...shared, Email1: 'mkc.control@example.org', Phone1: '555-123-4567' })).body.constituent.PkConstituent as number;
    expect((await api.post('/volunteers', { FkConstituent: person, IsStudent: true })).status).toBe(201);
    expect((await api.post('/volunteers', { FkConstituent: control, IsStudent: false })).status).toBe(201);
    // An update, so the copies hold a later value than the first revision's (and the look-up key its lowercase).
    expect((await api.patch(`/constituents/${person}`, { Email1: 'Mkv.New@Example.org' })).status).toBe(200);
    await oldRunner.waitFor((await log.head())!);
    await oldRunner.stop();
    const volunteerOf = (c: number) => (mongo.documents(OLD_VOLUNTEERS) as Docs).find((v) => v.FkConstituent === c)!;
    expect(volunteerOf(person)).toMatchObject({ ConstituentName: 'Mkvfirst Mkvlast', Email1: 'Mkv.New@Example.org', _email1: 'mkv.new@example.org' });
    const oldText = () => JSON.stringify([mongo.documents(OLD_CONSTITUENTS), mongo.documents(OLD_VOLUNTEERS)]).toLowerCase();
    const markers = ['mkv.new@example.org', '5558675309', 'mkvnick'];
    for (const marker of markers) expect(oldText()).toContain(marker);
    const controlBefore = {
      constituent: structuredClone((mongo.documents(OLD_CONSTITUENTS) as Docs).find((c) => c.PkConstituent === control)),
      volunteer: structuredClone(volunteerOf(control)),
    };

    const readModels = await thisBuild(mongo);
    const erasure = erasureOf(readModels);
    try {
      const ctx = { team: team.id, source: 'Application' as const, keyName: null, correlationId: `erase-${person}`, now: new Date() };
      await erasure.erase(ctx, person, null);

      for (const marker of markers) expect(oldText()).not.toContain(marker);
      // Its own record is gone, as the older build's projector makes it on ConstituentErased (its reads say 404).
      expect((mongo.documents(OLD_CONSTITUENTS) as Docs).some((c) => c.PkConstituent === person)).toBe(false);
      // Its volunteer keeps its own fields; the copies of the person, and their search grams, are gone.
      const volunteer = volunteerOf(person);
      expect(volunteer).toMatchObject({ IsStudent: true, ConstituentName: null, Email1: null, Phone1: null, _email1: null });
      expect((volunteer[NGRAMS] as string[]).filter((g) => g.startsWith('ConstituentName:') || g.startsWith('Email1:'))).toEqual([]);
      // The control, holding the same name and city, is untouched in both collections.
      expect((mongo.documents(OLD_CONSTITUENTS) as Docs).find((c) => c.PkConstituent === control)).toEqual(controlBefore.constituent);
      expect(volunteerOf(control)).toEqual(controlBefore.volunteer);
      expect(controlBefore.volunteer).toMatchObject({ ConstituentName: 'Mkvfirst Mkvlast', Email1: 'mkc.control@example.org' });

      // Erased again (a resumed erasure runs every step again): nothing more changes.
      const after = structuredClone([mongo.documents(OLD_CONSTITUENTS), mongo.documents(OLD_VOLUNTEERS)]);
      await erasure.erase({ ...ctx, now: new Date() }, person, null);
      expect([mongo.documents(OLD_CONSTITUENTS), mongo.documents(OLD_VOLUNTEERS)]).toEqual(after);
      expect(await cleanOtherVersions(readModels, { team: team.id, id: person, values: ['Mkv.New@Example.org', 'Mkvfirst', 'Mkvlast'] })).toBe(0);
    } finally {
      erasure.close();
    }
  });

  it('pages through the team by key, past documents of other people it leaves as they are, and writes nothing to its own versions', async () => {
    const mongo = scriptedMongo();
    const older = new MongoReadStore(mongo.db);
    const def = volunteersProjection.collections[0];
    await older.defineCollection({ ...def, version: 1 });
    const copy = { ConstituentName: 'Mkpname', Email1: 'mkp@example.org', Phone1: '555-000-1111', _email1: 'mkp@example.org' };
    // Person 7's volunteers among others' volunteers holding the very same text, and another team's.
    const linked = [2, 4, 6];
    for (const id of [1, 2, 3, 4, 5, 6]) await older.put('volunteers', { PkVolunteer: id, FkTeam: 1, FkConstituent: linked.includes(id) ? 7 : 100 + id, IsStudent: true, ...copy });
    await older.put('volunteers', { PkVolunteer: 8, FkTeam: 2, FkConstituent: 7, ...copy });
    const readModels = await thisBuild(mongo);
    await readModels.store.put('volunteers', { PkVolunteer: 9, FkTeam: 1, FkConstituent: 7, ...copy });

    const person = { team: 1, id: 7, values: ['Mkpname', 'MKP@example.org', 'mkp@example.org', '555-000-1111'] };
    expect(await cleanOtherVersions(readModels, person, 2)).toBe(3);
    const byId = new Map((mongo.documents(OLD_VOLUNTEERS) as Docs).map((v) => [v.PkVolunteer, v]));
    for (const id of linked) expect(byId.get(id)).toMatchObject({ ConstituentName: null, Email1: null, Phone1: null, _email1: null, IsStudent: true, FkConstituent: 7 });
    for (const id of [1, 3, 5, 8]) expect(byId.get(id)).toMatchObject(copy);
    // This build's own collection is its projectors' to clean, as they apply ConstituentErased.
    expect(mongo.documents('volunteers.v2')[0]).toMatchObject(copy);
    expect(await cleanOtherVersions(readModels, person, 2)).toBe(0);
  });
});
