import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BLOCKS, unpackBlock } from '../../dispatcher/feed-blocks.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { projectors as productProjectors } from '../../projections/index.js';
import { SqliteReadCore } from '../../projections/store/sqlite-core.js';
import { LOG_FILE, READ_MODELS_FILE } from '../../runtime/read-models.js';
import { rebuildReadModels } from '../../runtime/rebuild.js';
import { taskTeam, writeMixedChanges } from '../api/volunteer-support.js';
import { client, startTestApp } from '../support/app.js';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'turnout-rebuild-'));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
afterEach(() => {
  delete process.env.TURNOUT_TEST_REBUILD_FAIL;
});

const metadata = (team = 1) => ({ team, source: 'Public API' as const, keyName: 'Test', correlationId: 'c', at: new Date().toISOString() });

const FIXTURE = pathToFileURL(path.resolve(import.meta.dirname, '../support/rebuild-projectors.ts')).href;

/**
 * Every table of a read database, row by row with its rowid (the order among ties), except the
 * FTS5 tables: how their segments are split depends on how the index was built, so they are
 * checked against their rows instead (FTS5's integrity-check throws on any difference). The
 * change feed's table is given as its envelopes, wherever they lie: which of them are packed
 * into blocks, and how tightly, depends on how it was built (a rebuild writes whole blocks at
 * once, dispatcher/feed-bulk.ts), never what a page answers.
 */
function dump(file: string): Record<string, string[]> {
  // Not read-only: an integrity-check is run as a write (it writes nothing).
  const db = new Database(file);
  try {
    const tables = db.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'`).all() as Array<{ name: string; sql: string }>;
    const out: Record<string, string[]> = {};
    for (const { name, sql } of tables) {
      if (/VIRTUAL TABLE/i.test(sql)) {
        // Rank 1: the index is checked against its content table's rows too, not only in itself.
        db.prepare(`INSERT INTO "${name}" ("${name}", rank) VALUES ('integrity-check', 1)`).run();
        continue;
      }
      if (name.includes('__fts')) continue;
      const rowid = /WITHOUT ROWID/i.test(sql) ? '' : 'rowid AS _rowid_, ';
      out[name] = (db.prepare(`SELECT ${rowid}* FROM "${name}"`).raw().all() as unknown[][]).map((r) => JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).sort();
    }
    if (out[BLOCKS]) {
      const packed = (db.prepare(`SELECT team, body FROM ${BLOCKS}`).all() as Array<{ team: number; body: Buffer }>).flatMap((b) =>
        unpackBlock(b.body).map((e) => JSON.stringify([b.team, Number(e.seq), e.at, e.type, e.json])),
      );
      out.feed_envelopes = [...out.feed_envelopes, ...packed].sort();
      out[BLOCKS] = [`${out[BLOCKS].length > 0}`];
    }
    return out;
  } finally {
    db.close();
  }
}

const fileHash = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const leftovers = (dir: string) => readdirSync(dir).filter((f) => f.includes('.rebuild'));

describe('the offline rebuild of the embedded read models', () => {
  it('builds exactly what the live projection built, on two threads or one, and moves it into place whole', async () => {
    const dir = tempDir();
    const t = await startTestApp({ dataDir: dir });
    const team = await taskTeam(t);
    await writeMixedChanges(team);
    for (let i = 0; i < 40; i++) {
      const c = await team.api.post('/constituents', { FirstName: `Rebuilt${i}`, LastName: 'Person', Email1: `rebuilt${i}@example.org` });
      expect(c.status).toBe(201);
      if (i % 3 === 0) expect((await team.api.patch(`/constituents/${c.body.constituent.PkConstituent}`, { Nickname: `R${i}` })).status).toBe(200);
    }
    // Every field type, nulls and unicode, updated after their creation; one erased (decisions.md §17).
    const full = {
      FirstName: 'Zoë', MiddleInitial: null, LastName: 'Łukasz 😀 "quoted" \\', Nickname: 'Ünï', Salutation: null, ConstituentName: 'Zoë & Łukasz',
      FkConstituentType: 2, Email1: 'Zoe.Full@Example.org', Email2: null, Phone1: '555-010-0101', Phone2: null, Phone3: '5550100103',
      Website1: 'https://example.org/ü', MailingAddressLine1: '1 Rue de l’Église', MailingAddressLine2: null, MailingCity: 'Zürich',
      MailingState: 'NY', MailingZipCode: '10001', DateOfBirth: '1990-02-28', IsEmailOk: true, IsPhoneOk: false, IsTextOk: null,
      IsSolicitOk: true, IsActiveConstituent: false, ConstituentDescription: '改行\nand tab\t',
    };
    const singles: number[] = [];
    for (const body of [full, { ...full, Email1: 'erased@example.org', FirstName: 'Gone' }, { LastName: 'Bare' }]) {
      const c = await team.api.post('/constituents', body);
      expect(c.status, c.raw).toBe(201);
      singles.push(c.body.constituent.PkConstituent as number);
    }
    expect((await team.api.patch(`/constituents/${singles[0]}`, { Nickname: null, Email2: 'second@example.org', IsTextOk: true })).status).toBe(200);
    expect((await team.api.patch(`/constituents/${singles[1]}`, { Nickname: 'Before erasure' })).status).toBe(200);
    expect((await team.admin.post(`/constituents/${singles[1]}/erase`, {})).status).toBe(200);
    // More than a block of the feed's envelopes (feed-blocks.ts BLOCK), so both builds pack some.
    const items = Array.from({ length: 300 }, (_, i) => ({ FirstName: `Many${i}`, LastName: 'Batch', Email1: `many${i}@example.org` }));
    expect((await team.api.post('/constituents/batch', { items })).status).toBe(200);
    const answers = async (get: (url: string) => Promise<{ body: unknown }>) => {
      const pages: unknown[] = [];
      for (let after: string | null = null, k = 0; k < 400; k++) {
        const page = (await get(`/changes?limit=7${after ? `&after=${after}` : ''}`)).body as { changes: unknown[]; next: string; hasMore: boolean };
        pages.push(page);
        if (!page.hasMore) break;
        after = page.next;
      }
      return {
        pages,
        email: (await get('/constituents?email=MANY17@example.org')).body,
        search: (await get('/constituents?search=many2&pageSize=50')).body,
        list: (await get('/constituents?page=3&pageSize=40')).body,
        // Single reads with their ETags: the read model's body and revision (decisions.md §11).
        singles: await Promise.all(singles.map(async (id) => {
          const r = (await get(`/constituents/${id}`)) as { status?: number; body: unknown; headers?: Record<string, unknown> };
          return { status: r.status, body: r.body, etag: r.headers?.etag };
        })),
      };
    };
    const liveAnswers = await answers((url) => team.api.get(url));
    expect((liveAnswers.email as { constituents: unknown[] }).constituents).toHaveLength(1);
    await t.close();
    const readFile = path.join(dir, READ_MODELS_FILE);
    // The live search tables take in their waiting rows now, as a rebuild leaves none waiting.
    const core = new SqliteReadCore(readFile);
    for (const p of productProjectors) for (const c of p.collections) core.define(c);
    core.syncSearch();
    core.close();
    const live = dump(readFile);
    expect(Object.entries(live).filter(([name, rows]) => name.includes('__pending') && rows.length)).toEqual([]);
    expect(live.feed_envelopes.length).toBeGreaterThan(340);
    expect(live[BLOCKS]).toEqual(['true']);
    expect(live.activity.length).toBeGreaterThan(50);

    for (const threads of [2, 1] as const) {
      const progress: Array<{ done: number; total: number }> = [];
      const { events, ms, threads: times } = await rebuildReadModels(dir, { threads, progressEveryMs: 0, onProgress: (p) => progress.push(p) });
      expect(dump(readFile)).toEqual(live);
      // Where the time went, per thread: the bench's CPU figures (Linux tells each thread's own).
      expect(times.map((t) => t.name)).toEqual(threads === 2 ? ['here', 'apart', 'search'] : ['here']);
      for (const t of times) {
        expect(t.ms).toBeGreaterThan(0);
        expect(t.ms).toBeLessThanOrEqual(ms);
        if (process.platform === 'linux') expect(t.cpuMs).toBeGreaterThan(0);
        // Its stretches one after another, each with where its time went (the bench's table of waits).
        const spans = t.timeline.spans;
        expect(spans.length).toBeGreaterThan(0);
        for (const [i, span] of spans.entries()) {
          expect(span.end).toBeGreaterThanOrEqual(span.start);
          if (i > 0) expect(span.start).toBe(spans[i - 1].end);
          if (process.platform === 'linux') expect([span.cpuMs, span.queuedMs].every((ms) => ms !== null && ms >= 0)).toBe(true);
        }
      }
      const stretches = (name: string) => times.find((t) => t.name === name)!.timeline.spans.map((s) => s.what);
      expect(stretches('here')).toEqual(
        threads === 2 ? ['start', 'log', 'projectors end', 'indexes', 'waiting for apart', 'copy apart in', 'waiting for search', 'adopt search', 'finish'] : ['start', 'log', 'projectors end', 'finish'],
      );
      if (threads === 2) {
        expect(stretches('apart')).toEqual(['start', 'log', 'projectors end']);
        expect(stretches('search')).toEqual(['start', 'copy text', 'index']);
        // The second thread takes each chunk through its timed wait.
        expect(times[1].timeline.waits['a chunk'].times).toBeGreaterThan(0);
      }
      expect(progress.at(-1)).toMatchObject({ done: events, total: events });
      expect(progress.map((p) => p.done)).toEqual([...progress.map((p) => p.done)].sort((a, b) => a - b));
      expect(leftovers(dir)).toEqual([]);
      expect(statSync(readFile).mode & 0o777).toBe(0o600);
    }

    // What it built serves reads as the live one did.
    const again = await startTestApp({ dataDir: dir });
    const api = client(again.app, '/api/v1', team.keys.Integration.key);
    expect((await api.get('/constituents?search=rebuilt1')).body.total).toBe(11);
    expect((await api.get('/changes?limit=1000')).body.changes.length).toBe(live.feed_envelopes.filter((r) => r.startsWith(`[${team.id},`)).length);
    // Pages of the feed, look-ups, searches and lists answer as the live-built file did.
    expect(await answers((url) => api.get(url))).toEqual(liveAnswers);
    await again.close();
  });

  for (const failing of ['journal', 'ledger']) {
    it(`leaves the read models as they were when a projector fails (${failing}, built ${failing === 'journal' ? 'apart' : 'on its own thread'})`, async () => {
      const dir = tempDir();
      const log = new SqliteEventLog(path.join(dir, LOG_FILE));
      for (let i = 0; i < 30; i++) await log.append(`thing-${i % 4}`, [{ type: i === 17 ? 'Boom' : 'Thing', data: {}, metadata: metadata() }], 'any');
      await log.close();
      const readFile = path.join(dir, READ_MODELS_FILE);

      // Its end (long SQLite statements) is said once to the caller, whose heartbeat then runs,
      // and ended with it, also when a rebuild fails (decisions.md §13: a line every 5 s).
      const silences: string[] = [];
      let silent = 0;
      const whileSilent = (what: string) => (silences.push(what), silent++, () => void silent--);
      const { events } = await rebuildReadModels(dir, { projectorsModule: FIXTURE, whileSilent });
      expect([silences, silent]).toEqual([['the indexes, then the read models moved into place'], 0]);
      expect(events).toBe(30);
      const built = dump(readFile);
      expect(built.ledger).toHaveLength(1);
      // The id lives in its column, not again in the document's JSON (sqlite-schema.ts storedDoc).
      expect(JSON.parse(built.ledger[0])).toContain('{"n":30}');
      expect(built.journal).toHaveLength(30);
      const before = fileHash(readFile);

      process.env.TURNOUT_TEST_REBUILD_FAIL = failing;
      await expect(rebuildReadModels(dir, { projectorsModule: FIXTURE, whileSilent })).rejects.toThrow(`${failing} refuses Boom`);
      expect(silent).toBe(0);
      expect(fileHash(readFile)).toBe(before);
      expect(leftovers(dir)).toEqual([]);
    });
  }

  it('builds a collection with lists and searches apart as it builds it in place', async () => {
    const dir = tempDir();
    const log = new SqliteEventLog(path.join(dir, LOG_FILE));
    const types = ['Alpha', 'Beta', 'Gamma', 'Delta'];
    for (let i = 0; i < 60; i++) {
      await log.append(`thing-${i % 5}`, [{ type: types[i % 4] as 'Thing', data: {}, metadata: metadata(1 + (i % 3)) }], 'any');
    }
    await log.close();
    const readFile = path.join(dir, READ_MODELS_FILE);
    await rebuildReadModels(dir, { projectorsModule: FIXTURE, threads: 1 });
    const inPlace = dump(readFile);
    await rebuildReadModels(dir, { projectorsModule: FIXTURE, threads: 2 });
    expect(dump(readFile)).toEqual(inPlace);
    const db = new Database(readFile, { readonly: true });
    const indexes = db.prepare(`SELECT name FROM sqlite_master WHERE type IN ('index', 'trigger') AND tbl_name = 'journal' ORDER BY name`).pluck().all();
    expect(indexes.length).toBeGreaterThanOrEqual(6); // the key, team, the sort's, the scan index and three triggers
    expect(db.prepare(`SELECT count(*) FROM journal__fts0 WHERE journal__fts0 MATCH '"amm"'`).pluck().get()).toBe(15);
    db.close();
  });
});
