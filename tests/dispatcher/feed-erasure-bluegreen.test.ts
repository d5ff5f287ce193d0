import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { constituentStream } from '../../domain/constituent/events.js';
import { FEED_MODEL, FeedModel, feedModelProjector } from '../../dispatcher/feed-model.js';
import { ENVELOPE_RULES } from '../../dispatcher/envelope.js';
import type { Projector } from '../../projections/engine/projector.js';
import { ProjectionRunner } from '../../projections/engine/main-thread.js';
import { MongoReadStore } from '../../projections/store/mongo.js';
import { Erasure } from '../../runtime/erasure.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { scriptedMongo } from '../support/scripted-mongo.js';

/**
 * decisions.md §17 across builds sharing one MongoDB store (a blue/green deploy): an erasure
 * served by one build (blue, this build's feed version) leaves no erased value in the change feed's collection of
 * another version (green, the next one), whether green is running, stopped, or on a store the erasure
 * cannot reach and catches up later.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** Blue is this build's feed version; green the next one up. */
const BLUE = 1 + ENVELOPE_RULES;
const GREEN = BLUE + 1;
const green = (): Projector => ({ ...feedModelProjector(t.runtime.services.log), version: GREEN });
const textOf = (mongo: ReturnType<typeof scriptedMongo>, version: number) => JSON.stringify(mongo.documents(`${FEED_MODEL.name}.v${version}`));

/** A person (with its marker as last name) written through the API and projected by every runner given; its id. */
async function person(marker: string, runners: ProjectionRunner[]): Promise<{ team: number; id: number }> {
  const team = await t.team();
  const id = (await team.api.Integration.post('/constituents', { FirstName: `${marker}first`, LastName: marker })).body.constituent.PkConstituent as number;
  const head = (await t.runtime.services.log.head())!;
  for (const r of runners) await r.waitFor(head);
  return { team: team.id, id };
}

/** The erasure as a blue process serves it: it settles blue's runner and rewrites blue's collection. */
async function eraseThroughBlue(blue: MongoReadStore, blueRunner: ProjectionRunner, team: number, id: number, alsoSettled: ProjectionRunner[] = []): Promise<void> {
  const { services } = t.runtime;
  const erasure = new Erasure({
    deps: {
      ...services,
      settle: async (p) => {
        await services.settle(p);
        if (p) for (const r of [blueRunner, ...alsoSettled]) await r.waitFor(p);
      },
    },
    dataDir: ':memory:',
    mainSealer: services.mainSealer,
    feedModel: new FeedModel(blue, async () => undefined),
    webhookDb: null,
    idempotency: services.idempotency,
    readModelsFile: null,
    report: () => undefined,
  });
  try {
    await erasure.erase({ team, source: 'Application', keyName: null, correlationId: `erase-${id}`, now: new Date() }, id, null);
  } finally {
    erasure.close();
  }
}

/** Blue (this build's feed version) on a scripted MongoDB, and green (the next) on the same one or on `greenMongo`, both started. */
async function builds(greenMongo?: ReturnType<typeof scriptedMongo>) {
  const log = t.runtime.services.log;
  const mongo = scriptedMongo();
  const blue = new MongoReadStore(mongo.db);
  const blueRunner = new ProjectionRunner(log, blue, [feedModelProjector(log)]);
  const greenRunner = new ProjectionRunner(log, new MongoReadStore((greenMongo ?? mongo).db), [green()]);
  await blueRunner.start();
  await greenRunner.start();
  return { log, mongo, blue, blueRunner, greenRunner };
}

describe("an erasure and the change feed's collections of other builds", () => {
  it('leaves the person in neither version when both builds run on the same store', async () => {
    const { log, mongo, blue, blueRunner, greenRunner } = await builds();
    try {
      const { team, id } = await person('Mkbgboth', [blueRunner, greenRunner]);
      expect(textOf(mongo, BLUE)).toContain('Mkbgboth');
      expect(textOf(mongo, GREEN)).toContain('Mkbgboth');
      await eraseThroughBlue(blue, blueRunner, team, id);
      await greenRunner.waitFor((await log.head())!);
      expect(textOf(mongo, BLUE)).not.toContain('Mkbgboth');
      expect(textOf(mongo, GREEN)).not.toContain('Mkbgboth');
    } finally {
      await blueRunner.stop();
      await greenRunner.stop();
    }
  });

  it("redacts a stopped build's collection in place, keeping each envelope", async () => {
    const { mongo, blue, blueRunner, greenRunner } = await builds();
    try {
      const { team, id } = await person('Mkbgstopped', [blueRunner, greenRunner]);
      // Green stops before the erasure, so its projector never sees ConstituentErased: only the erasure can clean it.
      await greenRunner.stop();
      const before = mongo.documents(`${FEED_MODEL.name}.v${GREEN}`).length;
      await eraseThroughBlue(blue, blueRunner, team, id);
      expect(textOf(mongo, GREEN)).not.toContain('Mkbgstopped');
      const docs = mongo.documents(`${FEED_MODEL.name}.v${GREEN}`) as Array<{ team: number; json: string }>;
      expect(docs.length).toBe(before);
      const created = docs.map((d) => JSON.parse(d.json)).find((e) => e.type === 'constituent.created' && e.data.PkConstituent === id);
      expect(created.data).toMatchObject({ LastName: null, FirstName: null });
    } finally {
      await blueRunner.stop();
      await greenRunner.stop().catch(() => undefined);
    }
  });

  it("is cleaned by a running build's own projector that applies the erasure before the log is rewritten", async () => {
    // Green's store is one the erasure does not reach, and the erasure's command waits until green
    // has applied ConstituentErased: green rebuilds the person's envelopes before the log's rewrite.
    const greenMongo = scriptedMongo();
    const { log, blue, blueRunner, greenRunner } = await builds(greenMongo);
    try {
      const { team, id } = await person('Mkbglive', [blueRunner, greenRunner]);
      await eraseThroughBlue(blue, blueRunner, team, id, [greenRunner]);
      await greenRunner.waitFor((await log.head())!);
      expect(textOf(greenMongo, GREEN)).not.toContain('Mkbglive');
      const envelopes = (greenMongo.documents(`${FEED_MODEL.name}.v${GREEN}`) as Array<{ json: string }>).map((d) => JSON.parse(d.json));
      expect(envelopes.find((e) => e.type === 'constituent.created' && e.data.PkConstituent === id)).toMatchObject({ erased: true, data: { LastName: null } });
    } finally {
      await blueRunner.stop();
      await greenRunner.stop();
    }
  });

  it('is cleaned by its own projector when a build that projected the person catches up over the erasure', async () => {
    // Green's store is one the erasure does not reach: only its projector can clean it.
    const greenMongo = scriptedMongo();
    const { log, blue, blueRunner, greenRunner: first } = await builds(greenMongo);
    const { team, id } = await person('Mkbgcatchup', [blueRunner, first]);
    await first.stop();
    expect(textOf(greenMongo, GREEN)).toContain('Mkbgcatchup');
    const later = new ProjectionRunner(log, new MongoReadStore(greenMongo.db), [green()]);
    try {
      await eraseThroughBlue(blue, blueRunner, team, id);
      expect(textOf(greenMongo, GREEN)).toContain('Mkbgcatchup');
      await later.start();
      await later.waitFor((await log.head())!);
      expect(textOf(greenMongo, GREEN)).not.toContain('Mkbgcatchup');
      // Applied again (a replay), the erasure's rebuild changes nothing.
      const settled = textOf(greenMongo, GREEN);
      const erased = (await log.readStream(constituentStream(id))).at(-1)!;
      expect(erased.type).toBe('ConstituentErased');
      const again = new MongoReadStore(greenMongo.db);
      await again.defineCollection({ ...FEED_MODEL, version: GREEN });
      await green().apply(erased as never, again);
      expect(textOf(greenMongo, GREEN)).toBe(settled);
    } finally {
      await blueRunner.stop();
      await later.stop().catch(() => undefined);
    }
  });
});
