import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLOCKS, unpackBlock } from '../../dispatcher/feed-blocks.js';
import { START } from '../../dispatcher/feed-cursor.js';
import { FeedTable, feedTableProjector } from '../../dispatcher/feed-table.js';
import { openLogReader } from '../../eventlog/sqlite-file.js';
import { constituentSearch } from '../../projections/constituents.js';
import { SqliteProjection } from '../../projections/engine/sqlite-step.js';
import { productProjectors } from '../../projections/index.js';
import { SqliteReadCore } from '../../projections/store/sqlite-core.js';
import { LOG_FILE } from '../../runtime/read-models.js';
import { startTestApp } from '../support/app.js';
import { taskTeam, writeMixedChanges } from '../api/volunteer-support.js';

/**
 * A live step of many events lets its projectors hold writes to its end (engine/sqlite-step.ts
 * HELD_STEP, Projector.startStep): the change feed then packs a team's envelopes into blocks
 * without making each a row first. The same log applied one event a step and in steps of any
 * sizes, held from any size, must leave the same read store: every collection's rows (the
 * activity log's among them) and rowids, the same search answers, the same feed pages.
 */
const dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-step-many-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const teams: number[] = [];
let builds = 0;

beforeAll(async () => {
  const t = await startTestApp({ dataDir: dir });
  for (let k = 0; k < 2; k++) {
    const team = await taskTeam(t);
    await writeMixedChanges(team);
    const ids: number[] = [];
    for (let i = 0; i < 24; i++) {
      const c = await team.api.post('/constituents', { FirstName: `Held${i}`, LastName: k ? 'Roe' : 'Doe', Email1: `held${i}.${k}@example.org` });
      ids.push(c.body.constituent.PkConstituent);
      if (i % 5 === 1) await team.api.patch(`/constituents/${ids[i - 1]}`, { LastName: `Moved${i}` });
      if (i % 7 === 3) await team.admin.del(`/constituents/${ids[i - 2]}`);
    }
    teams.push(team.id);
  }
  await t.close();
}, 60_000);

interface Built {
  file: string;
  core: SqliteReadCore;
  /** Rows the build inserted, updated and deleted (SQLite's total_changes). */
  changes: number;
}

/** The read store built from the whole log in steps of `sizes` (cycled), writes held from `heldFrom` events a step, feed blocks of `block`. */
async function build(sizes: number[], heldFrom: number, block: number): Promise<Built> {
  const file = path.join(dir, `read-${builds++}.sqlite`);
  const log = openLogReader(path.join(dir, LOG_FILE));
  const core = new SqliteReadCore(file);
  const projection = new SqliteProjection(core, [...productProjectors(log), feedTableProjector(core.db, log, { block })], log, { heldFrom });
  projection.prepare();
  for (let i = 0; !(await projection.step(sizes[i % sizes.length])).caughtUp; i++);
  core.syncSearch();
  log.close();
  return { file, core, changes: core.db.prepare('SELECT total_changes()').pluck().get() as number };
}

/** Everything a reader could tell apart: each collection's rows with their rowids, searches, and every feed page. */
async function readable({ file, core }: Built) {
  const rows = Object.fromEntries([...core.plans.values()].map((plan) => [plan.def.name, core.db.prepare(`SELECT rowid, * FROM ${plan.table} ORDER BY rowid`).raw().all()]));
  const searches = teams.flatMap((team) => ['held1', 'roe', 'moved', 'example.org', 'ada'].map((s) => core.find(constituentSearch(team, s, { page: 1, pageSize: 100 }))));
  const feed = new FeedTable(file, async () => {});
  const pages: unknown[] = [];
  try {
    for (const team of teams)
      for (const limit of [1, 3, 1000])
        for (let after = START; ; ) {
          const page = await feed.page(team, { after, types: null, limit });
          pages.push(page);
          if (!page.hasMore) break;
          after = page.next;
        }
  } finally {
    feed.close();
  }
  return { rows, searches, pages };
}

const one = new Map<number, Awaited<ReturnType<typeof readable>>>();
/** Applied one event a step (never held), per block size: what every other build must equal. */
async function oneByOne(block: number) {
  let seen = one.get(block);
  if (!seen) {
    const built = await build([1], Infinity, block);
    seen = await readable(built);
    built.core.close();
    one.set(block, seen);
  }
  return seen;
}

describe('a live step of many events', () => {
  it('leaves the read store as the same events applied one at a time', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 80 }), { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 40 }), fc.constantFrom(2, 3, 7, 256), async (sizes, heldFrom, block) => {
        const built = await build(sizes, heldFrom, block);
        try {
          const got = await readable(built);
          const want = await oneByOne(block);
          expect(got.rows).toEqual(want.rows);
          expect(got.searches).toEqual(want.searches);
          expect(got.pages).toEqual(want.pages);
          // Each envelope once, in a block or a row, and less than a block and a count's interval of rows a team.
          const inBlocks = (built.core.db.prepare(`SELECT body FROM ${BLOCKS}`).pluck().all() as Buffer[]).flatMap((b) => unpackBlock(b).map((e) => e.seq));
          const inRows = built.core.db.prepare('SELECT seq FROM feed_envelopes').pluck().safeIntegers(true).all() as bigint[];
          expect(new Set([...inBlocks, ...inRows]).size).toBe(inBlocks.length + inRows.length);
          for (const n of built.core.db.prepare('SELECT count(*) FROM feed_envelopes GROUP BY team').pluck().all() as number[]) expect(n).toBeLessThan(block + Math.min(64, block));
        } finally {
          built.core.close();
        }
      }),
      { numRuns: 20 },
    );
  }, 60_000);

  it('packs blocks in a step of many events without writing their envelopes as rows first', async () => {
    const held = await build([1000], 1, 3);
    const unheld = await build([1000], Infinity, 3);
    try {
      const packed = (held.core.db.prepare(`SELECT body FROM ${BLOCKS}`).pluck().all() as Buffer[]).flatMap((b) => unpackBlock(b)).length;
      expect(packed).toBeGreaterThan(30);
      // Unheld, each packed envelope was a row inserted, then deleted once packed.
      expect(held.changes).toBeLessThan(unheld.changes - packed);
      expect(await readable(held)).toEqual(await oneByOne(3));
    } finally {
      held.core.close();
      unheld.core.close();
    }
  });
});
