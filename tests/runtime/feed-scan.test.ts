import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { constituentStream } from '../../domain/constituent/events.js';
import { fromLog } from '../../domain/events.js';
import { envelopeRebuilder, staleEnvelope } from '../../dispatcher/erasure.js';
import { BLOCKS, packer, unpackBlock } from '../../dispatcher/feed-blocks.js';
import { START } from '../../dispatcher/feed-cursor.js';
import type { FeedRewritePlan } from '../../dispatcher/feed-rewrite.js';
import { FeedTable, feedTableProjector, planFeedTableRewrite } from '../../dispatcher/feed-table.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { openLogReader } from '../../eventlog/sqlite-file.js';
import { planFeedRewriteOffThread } from '../../runtime/feed-scan.js';
import { LOG_FILE } from '../../runtime/read-models.js';
import { client, startTestApp } from '../support/app.js';

/**
 * An erasure's rewrite of the embedded change-feed table, planned on a thread of its own
 * (runtime/feed-scan.ts) and written on the main thread (FeedTable.rewriteBy): the same table
 * as a rewrite planned in place and as one built afresh from the erased log, blocks included;
 * what the projector packs between the plan and its write is planned again, not lost or left
 * stale; a failed scan fails the erasure, which the next start finishes.
 */
const dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-feed-scan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const logFile = path.join(dir, LOG_FILE);

const MARK = 'Qzfeedscan';
const PERSON = { FirstName: `${MARK}First`, LastName: `${MARK}Last`, Email1: `${MARK.toLowerCase()}@example.org`, MailingCity: 'Springfield' };
const values = [PERSON.FirstName, PERSON.LastName, PERSON.Email1, PERSON.MailingCity, `${MARK}Nick`];
let team: number;
let positions: bigint[];
/** The table as it stood before the erasure: rows alone, and packed in blocks of 3. */
let rowsFile: string;
let blocksFile: string;
let lastBefore = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The change-feed table built from the log as it stands, into `file`, with blocks of `block`, up
 * to the last event before the erasure (an erased table holds nothing of the erasure's own event).
 */
async function build(file: string, block: number): Promise<void> {
  const log = openLogReader(logFile);
  const db = new Database(file);
  const projector = feedTableProjector(db, log, { block });
  for (const e of log.readAfter(0n, 100_000)) if (e.position.commit <= lastBefore) await projector.apply(fromLog(e), null as never);
  db.close();
  log.close();
}

async function everything(file: string): Promise<string[]> {
  const table = new FeedTable(file, async () => undefined);
  try {
    const out: string[] = [];
    for (let after = START; ; ) {
      const page = await table.page(team, { after, types: null, limit: 1000 });
      out.push(...page.changes);
      after = page.next;
      if (!page.hasMore) return out;
    }
  } finally {
    table.close();
  }
}

/** Every envelope text the file holds for the team, in rows and inside blocks. */
function stored(file: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare('SELECT json FROM feed_envelopes WHERE team = ?').pluck().all(team) as string[];
    const blocks = (db.prepare(`SELECT body FROM ${BLOCKS} WHERE team = ?`).pluck().all(team) as Buffer[]).flatMap((b) => unpackBlock(b).map((e) => e.json));
    return [...rows, ...blocks];
  } finally {
    db.close();
  }
}

const copy = (from: string, name: string) => {
  const to = path.join(dir, name);
  copyFileSync(from, to);
  return to;
};

beforeAll(async () => {
  const t = await startTestApp({ dataDir: dir });
  const made = await t.team();
  team = made.id;
  const api = made.api.Integration;
  for (let i = 0; i < 6; i++) await api.post('/constituents', { FirstName: `Other${i}`, LastName: 'Person', MailingCity: i % 2 ? 'Springfield' : 'Shelbyville' });
  const id = (await api.post('/constituents', PERSON)).body.constituent.PkConstituent as number;
  await api.patch(`/constituents/${id}`, { Nickname: `${MARK}Nick` });
  // A linked record's copy of the person's name, in an envelope of another stream.
  expect((await api.post('/volunteers', { FkConstituent: id, IsStudent: true })).status).toBe(201);
  for (let i = 6; i < 12; i++) await api.post('/constituents', { FirstName: `Other${i}`, LastName: 'Person' });
  // The table as the log stood before the erasure, built beside the running server's.
  const before = openLogReader(logFile);
  lastBefore = before.head();
  before.close();
  rowsFile = path.join(dir, 'rows.sqlite');
  blocksFile = path.join(dir, 'blocks.sqlite');
  await build(rowsFile, Number.MAX_SAFE_INTEGER);
  await build(blocksFile, 3);
  expect(stored(blocksFile).filter((j) => j.includes(MARK)).length).toBeGreaterThan(2);
  try {
    expect((await t.admin.post(`/teams/${team}/constituents/${id}/erase`, {})).status).toBe(200);
  } finally {
    await t.close();
  }
  const log = openLogReader(logFile);
  positions = (await log.readStream(constituentStream(id))).map((e) => e.position.prepare);
  log.close();
}, 60_000);

describe("an erasure's rewrite of the embedded change feed, planned off the main thread", () => {
  it('leaves the table as a rewrite planned in place does, and as one built afresh from the erased log, in blocks and rows', async () => {
    const fresh = path.join(dir, 'fresh.sqlite');
    await build(fresh, 3);
    const expected = await everything(fresh);
    expect(expected.some((j) => j.includes('"erased":true'))).toBe(true);

    const offThread = copy(blocksFile, 'off-thread.sqlite');
    const table = new FeedTable(offThread, async () => undefined);
    const changed = await table.rewriteBy(team, (after) => planFeedRewriteOffThread({ readModelsFile: offThread, logFile, team, after, values, positions }));
    table.close();
    expect(changed).toBeGreaterThan(2);

    const inPlace = copy(blocksFile, 'in-place.sqlite');
    const log = new SqliteEventLog(logFile);
    const same = new FeedTable(inPlace, async () => undefined);
    await same.rewrite(team, staleEnvelope(values, positions), envelopeRebuilder(log, team));
    same.close();
    await log.close();

    expect(await everything(offThread)).toEqual(expected);
    expect(await everything(inPlace)).toEqual(expected);
    expect(stored(offThread).filter((j) => j.includes(MARK))).toEqual([]);
  });

  it('plans again what the projector packed into a new block between the plan and its write, and leaves none of it stale', async () => {
    const file = copy(rowsFile, 'raced.sqlite');
    expect(stored(file).filter((j) => j.includes(MARK)).length).toBeGreaterThan(2);
    const projector = new Database(file);
    const table = new FeedTable(file, async () => undefined);
    const starts: bigint[] = [];
    const changed = await table.rewriteBy(team, async (after) => {
      starts.push(after);
      const plan = await planFeedRewriteOffThread({ readModelsFile: file, logFile, team, after, values, positions });
      // The projector thread's step between the scan and the write: the rows the plan read,
      // the person's among them, move into new blocks.
      if (starts.length === 1) packer(projector, 'feed_envelopes', 3)(team);
      return plan;
    });
    table.close();
    projector.close();
    expect(starts.length).toBeGreaterThan(1);
    expect(changed).toBeGreaterThan(2);
    const fresh = path.join(dir, 'fresh-rows.sqlite');
    await build(fresh, 3);
    expect(await everything(file)).toEqual(await everything(fresh));
    expect(stored(file).filter((j) => j.includes(MARK))).toEqual([]);
  });

  it('plans in the same way on the calling thread (the planner the thread runs)', async () => {
    const file = copy(blocksFile, 'planned-here.sqlite');
    const db = new Database(file, { readonly: true });
    const log = new SqliteEventLog(logFile);
    const rebuild = envelopeRebuilder(log, team);
    const rebuilt: bigint[] = [];
    const plan = await planFeedTableRewrite(db, team, -1n, staleEnvelope(values, positions), (seq) => (rebuilt.push(seq), rebuild(seq)));
    db.close();
    await log.close();
    const offThread = await planFeedRewriteOffThread({ readModelsFile: file, logFile, team, after: -1n, values, positions });
    // Bodies cross threads as Uint8Arrays: compared by their bytes.
    const bytes = (p: FeedRewritePlan) => ({ ...p, blocks: p.blocks.map((b) => ({ ...b, old: Buffer.from(b.old).toString('hex'), next: b.next && { ...b.next, body: Buffer.from(b.next.body).toString('hex') } })) });
    expect(bytes(offThread)).toEqual(bytes(plan));
    expect(plan.blocks.length).toBeGreaterThan(0);
    // Other constituents' envelopes that hold the person's city are not built again: a
    // constituent's envelope carries its own record alone. The volunteer's (a copy of the name) is.
    const types = new Map((await everything(file)).map((j) => JSON.parse(j) as { id: string; type: string }).map((e) => [e.id.split('_')[1], e.type]));
    const kinds = rebuilt.map((seq) => (positions.includes(seq / 10n) ? 'person' : types.get(String(seq))));
    expect(kinds).toContain('person');
    expect(kinds.filter((k) => k !== 'person' && k?.startsWith('constituent.'))).toEqual([]);
    expect(kinds.some((k) => k?.startsWith('volunteer.'))).toBe(true);
  });
});

describe('a scan that fails', () => {
  it('leaves the erasure pending, and the next start finishes it', async () => {
    const own = mkdtempSync(path.join(os.tmpdir(), 'turnout-feed-scan-fail-'));
    try {
      // The process's own next attempt is an hour away: the restart is what finishes it here.
      const t = await startTestApp({ dataDir: own, erasureRetry: { initialMs: 3_600_000, maxMs: 3_600_000 } });
      const made = await t.team();
      const key = made.keys.Integration.key as string;
      const id = (await made.api.Integration.post('/constituents', PERSON)).body.constituent.PkConstituent as number;
      process.env.TURNOUT_TEST_FEED_SCAN_FAIL = '1';
      let failed;
      try {
        failed = await made.admin.post(`/constituents/${id}/erase`, {});
      } finally {
        delete process.env.TURNOUT_TEST_FEED_SCAN_FAIL;
      }
      expect(failed.status).toBe(503);
      expect(failed.body.error.code).toBe('erasure_pending');
      const feed = async (app: typeof t) => JSON.stringify((await client(app.app, '/api/v1', key).get('/changes?limit=1000')).body.changes);
      // The record reads erased, yet its feed envelopes still wait for the rewrite.
      expect((await made.api.Integration.get(`/constituents/${id}`)).status).toBe(404);
      expect(await feed(t)).toContain(MARK);
      await t.close();

      const next = await startTestApp({ dataDir: own });
      try {
        for (const until = Date.now() + 30_000; (await next.app.inject({ url: '/readyz' })).statusCode !== 200; ) {
          if (Date.now() > until) throw new Error('the next start did not finish the erasure');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(await feed(next)).not.toContain(MARK);
        expect(await feed(next)).toContain('"erased":true');
      } finally {
        await next.close();
      }
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  }, 60_000);
});
