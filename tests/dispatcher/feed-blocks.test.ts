import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inflateRawSync } from 'node:zlib';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromLog } from '../../domain/events.js';
import { BLOCKS, packBlock, unpackBlock } from '../../dispatcher/feed-blocks.js';
import { ALL, type Cursor, type FeedQuery, START, typeMatcher } from '../../dispatcher/feed-cursor.js';
import { FeedTable, feedTableProjector } from '../../dispatcher/feed-table.js';
import { openLogReader } from '../../eventlog/sqlite-file.js';
import { LOG_FILE } from '../../runtime/read-models.js';
import { startTestApp } from '../support/app.js';
import { taskTeam, writeMixedChanges } from '../api/volunteer-support.js';

/**
 * The change feed's table packs a team's older envelopes into compressed blocks
 * (dispatcher/feed-blocks.ts). Built from the same log with blocks of 3 and with no blocks at all,
 * it must answer every page alike: any limit, types, time span and end, across block edges.
 */
const dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-feed-blocks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let teams: number[] = [];
let packed: FeedTable;
let plain: FeedTable;
/** Built in bulk: holding every team's envelopes until a block, and holding so few that they spill into rows. */
let bulk: FeedTable;
let spilled: FeedTable;
let bulkDbs: Database.Database[] = [];
let packedDb: Database.Database;
let times: number[] = [];

/** `bulk`: built as an offline rebuild builds it (feed-bulk.ts), holding at most `held` envelopes. */
async function build(file: string, block: number, bulk?: { held: number }): Promise<Database.Database> {
  const log = openLogReader(path.join(dir, LOG_FILE));
  const db = new Database(file);
  const projector = feedTableProjector(db, log, { block, bulk: !!bulk, bulkHeld: bulk?.held });
  const events = log.readAfter(0n, 100_000);
  for (const e of events) await projector.apply(fromLog(e), null as never);
  if (bulk) projector.endBulk!();
  // Applied again (a replay after a crash between the rows and the checkpoint): nothing changes.
  else for (const e of events.slice(0, 20)) await projector.apply(fromLog(e), null as never);
  log.close();
  return db;
}

beforeAll(async () => {
  const t = await startTestApp({ dataDir: dir });
  for (let k = 0; k < 2; k++) {
    const team = await taskTeam(t);
    await writeMixedChanges(team);
    for (let i = 0; i < 8; i++) {
      const c = await team.api.post('/constituents', { FirstName: `Block${i}`, LastName: 'Person' });
      if (i % 4 === 0) await team.api.patch(`/constituents/${c.body.constituent.PkConstituent}`, { Nickname: `B${i}` });
    }
    teams.push(team.id);
  }
  await t.close();
  packedDb = await build(path.join(dir, 'packed.sqlite'), 3);
  (await build(path.join(dir, 'plain.sqlite'), Number.MAX_SAFE_INTEGER)).close();
  bulkDbs = [await build(path.join(dir, 'bulk.sqlite'), 5, { held: 1_000 }), await build(path.join(dir, 'spilled.sqlite'), 5, { held: 6 })];
  bulk = new FeedTable(path.join(dir, 'bulk.sqlite'), async () => {});
  spilled = new FeedTable(path.join(dir, 'spilled.sqlite'), async () => {});
  times = (packedDb.prepare('SELECT at FROM feed_envelopes').pluck().all() as number[]).sort((a, b) => a - b);
  packed = new FeedTable(path.join(dir, 'packed.sqlite'), async () => {});
  plain = new FeedTable(path.join(dir, 'plain.sqlite'), async () => {});
}, 60_000);

afterAll(() => {
  packed?.close();
  plain?.close();
  packedDb?.close();
  bulk?.close();
  spilled?.close();
  for (const db of bulkDbs) db.close();
});

async function readAll(table: FeedTable, team: number, q: Omit<FeedQuery, 'after'>): Promise<{ pages: string[][]; cursors: Cursor[] }> {
  const pages: string[][] = [];
  const cursors: Cursor[] = [];
  let after = START;
  for (;;) {
    const page = await table.page(team, { ...q, after });
    pages.push(page.changes);
    cursors.push(page.next);
    after = page.next;
    if (!page.hasMore) return { pages, cursors };
  }
}

describe('the change feed table in blocks', () => {
  it('packs older envelopes into blocks and keeps fewer than a block of rows per team', () => {
    const blocks = packedDb.prepare(`SELECT count(*) FROM ${BLOCKS}`).pluck().get() as number;
    expect(blocks).toBeGreaterThan(6);
    const rows = packedDb.prepare('SELECT team, count(*) AS n FROM feed_envelopes GROUP BY team').all() as Array<{ n: number }>;
    // Counted every 3 envelopes: at most a block left, plus what came since the last count.
    for (const r of rows) expect(r.n).toBeLessThan(6);
  });

  it('answers every page as the table without blocks does', async () => {
    for (const team of teams) {
      const whole = await readAll(plain, team, { types: null, limit: 1000 });
      expect(whole.pages[0].length).toBeGreaterThan(15);
      for (const limit of [1, 2, 4, 7]) expect(await readAll(packed, team, { types: null, limit })).toEqual(await readAll(plain, team, { types: null, limit }));
      const types = typeMatcher('volunteer_task.*,constituent.updated');
      expect(await readAll(packed, team, { types, limit: 2 })).toEqual(await readAll(plain, team, { types, limit: 2 }));
      const at = { from: times[Math.floor(times.length / 3)], to: times[Math.floor((2 * times.length) / 3)] };
      expect(await readAll(packed, team, { types: null, limit: 3, at })).toEqual(await readAll(plain, team, { types: null, limit: 3, at }));
      // An end inside a block, and a start after every cursor a reader could hold.
      for (const cursor of whole.cursors.length ? (await readAll(plain, team, { types: null, limit: 1 })).cursors.slice(0, -1) : []) {
        const until: Cursor = { position: cursor.position, seen: ALL };
        expect(await readAll(packed, team, { types: null, limit: 5, until })).toEqual(await readAll(plain, team, { types: null, limit: 5, until }));
        expect(await packed.page(team, { after: cursor, types: null, limit: 3 })).toEqual(await plain.page(team, { after: cursor, types: null, limit: 3 }));
      }
    }
  });

  it('answers every page alike when built in bulk (a rebuild), blocks written whole or rows spilled and packed at the end', async () => {
    for (const db of bulkDbs) {
      expect(db.prepare(`SELECT count(*) FROM ${BLOCKS}`).pluck().get() as number).toBeGreaterThan(4);
      // Less than a block of rows per team is left, as the live packer leaves; some are left.
      const rows = db.prepare('SELECT team, count(*) AS n FROM feed_envelopes GROUP BY team').all() as Array<{ n: number }>;
      for (const r of rows) expect(r.n).toBeLessThan(5);
      expect(rows.reduce((n, r) => n + r.n, 0)).toBeGreaterThan(0);
    }
    // Every envelope is in one place only: in a block or a row.
    for (const db of bulkDbs) {
      const inBlocks = (db.prepare(`SELECT body FROM ${BLOCKS}`).pluck().all() as Buffer[]).flatMap((b) => unpackBlock(b).map((e) => String(e.seq)));
      const inRows = (db.prepare('SELECT seq FROM feed_envelopes').pluck().all() as number[]).map(String);
      expect(new Set([...inBlocks, ...inRows]).size).toBe(inBlocks.length + inRows.length);
    }
    for (const team of teams) {
      for (const table of [bulk, spilled]) {
        for (const limit of [1, 4, 1000]) expect(await readAll(table, team, { types: null, limit })).toEqual(await readAll(plain, team, { types: null, limit }));
        const types = typeMatcher('volunteer_task.*,constituent.updated');
        expect(await readAll(table, team, { types, limit: 2 })).toEqual(await readAll(plain, team, { types, limit: 2 }));
        for (const cursor of (await readAll(plain, team, { types: null, limit: 1 })).cursors.slice(0, -1)) {
          const until: Cursor = { position: cursor.position, seen: ALL };
          expect(await readAll(table, team, { types: null, limit: 5, until })).toEqual(await readAll(plain, team, { types: null, limit: 5, until }));
          expect(await table.page(team, { after: cursor, types: null, limit: 3 })).toEqual(await plain.page(team, { after: cursor, types: null, limit: 3 }));
        }
      }
    }
  });

  it('gives each envelope back as it went in, whatever its text holds', () => {
    const entries = [
      { seq: 10n, at: 1_700_000_000_000, type: 'constituent.created', json: JSON.stringify({ a: 'tab\there\nline\r\u0000', b: null }) },
      { seq: 2n ** 62n, at: -5, type: 'x', json: '{}' },
    ];
    expect(unpackBlock(packBlock(entries))).toEqual(entries);
  });

  it('deflates the UTF-8 of its lines joined, whatever their text, one block after another', () => {
    const entry = fc.record({
      seq: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
      at: fc.oneof(fc.integer(), fc.constant(8_640_000_000_000_000)),
      type: fc.oneof(fc.constantFrom('constituent.created', 'donation.updated'), fc.string({ unit: 'binary', maxLength: 4 })),
      json: fc.oneof(fc.jsonValue().map((v) => JSON.stringify(v)), fc.string({ unit: 'binary', maxLength: 40 })),
    });
    // Blocks of different sizes in turn: each is written over the last one's bytes.
    fc.assert(
      fc.property(fc.array(fc.array(entry, { maxLength: 40 }), { minLength: 1, maxLength: 4 }), (blocks) => {
        for (const entries of blocks) {
          const joined = entries.map((e) => `${e.seq}\t${e.at}\t${e.type}\t${e.json}`).join('\n');
          expect(inflateRawSync(packBlock(entries)).equals(Buffer.from(joined))).toBe(true);
        }
      }),
      { numRuns: 80 },
    );
  });

  it("rewrites an erasure's envelopes inside the blocks as in the rows, and drops those that no longer fire", async () => {
    const team = teams[0];
    const marker = /"Block[04]"/; // two constituents' first names: envelopes in blocks and maybe rows
    const before = (await readAll(plain, team, { types: null, limit: 1000 })).pages.flat();
    const picked = before.filter((j) => marker.test(j));
    expect(picked.length).toBeGreaterThan(1);
    const seqs = new Map<string, bigint>();
    let dropped = 0;
    for (const table of [packed, plain]) {
      const n = await table.rewrite(
        team,
        (_seq, json) => marker.test(json),
        async (seq) => {
          seqs.set(String(seq), seq);
          // The first one found no longer fires (dropped); the others are built again.
          if (seqs.size === 1 || [...seqs.values()][0] === seq) {
            dropped = 1;
            return null;
          }
          return JSON.stringify({ erased: true, seq: String(seq) });
        },
      );
      expect(n).toBe(picked.length);
    }
    const packedAfter = await readAll(packed, team, { types: null, limit: 4 });
    expect(packedAfter).toEqual(await readAll(plain, team, { types: null, limit: 4 }));
    const all = packedAfter.pages.flat();
    expect(all).toHaveLength(before.length - dropped);
    expect(all.filter((j) => marker.test(j))).toEqual([]);
    expect(all.filter((j) => j.includes('"erased":true'))).toHaveLength(picked.length - dropped);
    // Nothing left in any of the team's blocks' text either.
    for (const body of packedDb.prepare(`SELECT body FROM ${BLOCKS} WHERE team = ?`).pluck().all(team) as Buffer[])
      for (const e of unpackBlock(body)) expect(e.json).not.toMatch(marker);
  });
});
