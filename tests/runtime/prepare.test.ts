import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Position } from '../../domain/shared/events.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { SqliteReadCore } from '../../projections/store/sqlite-core.js';
import { lockPrepare, PrepareBusy } from '../../runtime/datadir-lock.js';
import { ERASURE_JOURNAL_FILE, ErasureUnderway } from '../../runtime/erasure-journal.js';
import { prepareReadModels } from '../../runtime/prepare.js';
import { adoptPrepared, discardPrepared, readPreparedState, recordedVersions } from '../../runtime/prepared.js';
import { LOG_FILE, READ_MODELS_FILE, startProjectorThread } from '../../runtime/read-models.js';
import { removeRebuildLeftovers } from '../../runtime/rebuild-files.js';
import { projectorVersions } from '../../runtime/thread-projectors.js';
import type { CounterDoc } from '../support/prepare-projectors.js';

/** decisions.md §13 `turnout rebuild --prepare`, and the start's adoption of what it prepared. */
const ROOT = path.resolve(import.meta.dirname, '../..');
const FIXTURE = pathToFileURL(path.join(ROOT, 'tests/support/prepare-projectors.ts')).href;
const metadata = { team: 1, source: 'Public API' as const, keyName: 'Test', correlationId: 'c', at: new Date().toISOString() };

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
afterEach(() => {
  delete process.env.TURNOUT_TEST_CHANGED_VERSION;
});

/** A data dir whose read models the fixture's projectors keep, as one release or the other. */
function dataDir() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-prepare-'));
  dirs.push(dir);
  const log = new SqliteEventLog(path.join(dir, LOG_FILE));
  let n = 0;
  return {
    dir,
    log,
    /** Appends `count` events in one append (one commit). */
    async append(count: number, type = 'Thing'): Promise<Position> {
      const events = Array.from({ length: count }, () => ({ type, data: { n: ++n }, metadata }));
      return (await log.append(`thing-${n % 7}`, events, 'any')).position;
    },
    /** The projector thread of a server of the release whose `changed` read model is at `version`. */
    server(version: number, reports: string[] = []) {
      process.env.TURNOUT_TEST_CHANGED_VERSION = String(version);
      const files = { logFile: path.join(dir, LOG_FILE), readFile: path.join(dir, READ_MODELS_FILE) };
      return startProjectorThread(files, (p) => log.countAfter(p), { report: (m) => reports.push(m), settings: { projectorsModule: FIXTURE, pollMs: 20 } });
    },
    async prepare(version: number, reports: string[] = []) {
      process.env.TURNOUT_TEST_CHANGED_VERSION = String(version);
      return prepareReadModels(dir, { projectorsModule: FIXTURE, report: (m) => reports.push(m) });
    },
    async adopt(version: number, reports: string[] = []) {
      process.env.TURNOUT_TEST_CHANGED_VERSION = String(version);
      return adoptPrepared(dir, await projectorVersions(FIXTURE), (m) => reports.push(m));
    },
    prepared: () => readdirSync(dir).filter((f) => f.includes('prepared')),
  };
}

function counter(file: string, name: string): CounterDoc | null {
  const core = new SqliteReadCore(file, { laidOutElsewhere: true });
  try {
    core.define({ name, idField: 'id' });
    return core.get(name, 'n') as CounterDoc | null;
  } finally {
    core.close();
  }
}

const fileHash = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

describe('turnout rebuild --prepare', () => {
  it('builds only the changed read model beside the live ones while the old server writes, and the start adopts it and applies only what came after', async () => {
    const d = dataDir();
    await d.append(1_500);
    const old = await d.server(1);
    await old.waitFor(await d.append(1));
    const keptBefore = counter(path.join(d.dir, READ_MODELS_FILE), 'kept')!;

    // The old release goes on writing, and its projector thread projecting, all through the prepare.
    let writing = true;
    let written: Position | null = null;
    const writer = (async () => {
      while (writing) {
        written = await d.append(3);
        await old.waitFor(written);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const prepared = await d.prepare(2);
    writing = false;
    await writer;

    expect(prepared).toMatchObject({ built: ['changed'], resumed: false });
    expect(path.relative(d.dir, prepared.file!)).toMatch(/^readmodels\.prepared-[0-9a-f]{16}\.sqlite$/);
    expect(prepared.position).toBeGreaterThan(1_500n);
    // The live read models are still the old release's, kept by its server.
    expect(recordedVersions(path.join(d.dir, READ_MODELS_FILE)).get('projector:changed')).toBe(1);
    // Written after the prepare had caught up: the new release applies these at its start.
    const head = await d.append(40);
    await old.waitFor(head);
    await old.stop();

    const reports: string[] = [];
    const adopted = await d.adopt(2, reports);
    expect(adopted).toMatchObject({ done: true, position: prepared.position, built: ['changed'] });
    expect(reports).toEqual([expect.stringMatching(/^read models: adopted readmodels\.prepared-[0-9a-f]{16}\.sqlite, prepared for this release \(built: changed\), up to log position \d+/)]);
    expect(d.prepared()).toEqual([]);
    const threadReports: string[] = [];
    const started = await d.server(2, threadReports);
    await started.waitFor(head);
    await started.stop();
    // Nothing was built again at the start: it went on from the prepared checkpoints.
    expect(threadReports.filter((r) => r.includes('to build from the log'))).toEqual([]);

    const live = path.join(d.dir, READ_MODELS_FILE);
    const total = Number(head.commit);
    const changed = counter(live, 'changed')!;
    const kept = counter(live, 'kept')!;
    expect(changed).toMatchObject({ applies: total, violations: 0, last: String(head.commit) });
    expect(kept).toMatchObject({ applies: total, violations: 0, last: String(head.commit) });
    // `kept` is the old server's document, copied and carried on; `changed` was built by the prepare.
    expect(kept.madeBy).toBe(keptBefore.madeBy);
    expect(changed.madeBy).not.toBe(keptBefore.madeBy);
    expect(recordedVersions(live).get('projector:changed')).toBe(2);
    await d.log.close();
  }, 60_000);

  it('leaves the live files untouched when killed half-way, and the next prepare goes on from where it stopped and completes', async () => {
    const d = dataDir();
    await d.append(2_499);
    await d.append(1, 'Kill');
    const head = await d.append(500);
    const old = await d.server(1);
    await old.waitFor(head);
    await old.stop();
    await d.log.close();
    const live = path.join(d.dir, READ_MODELS_FILE);
    const before = { live: fileHash(live), log: fileHash(path.join(d.dir, LOG_FILE)) };

    // Compiled when the suite runs from the test build (npm test), else through tsx.
    const build = process.env.TURNOUT_TEST_BUILD;
    const [script, fixture, loader] = build
      ? [path.join(ROOT, build, 'tests/support/prepare-child.js'), pathToFileURL(path.join(ROOT, build, 'tests/support/prepare-projectors.js')).href, []]
      : [path.join(ROOT, 'tests/support/prepare-child.ts'), FIXTURE, ['--import', 'tsx']];
    const child = spawn(process.execPath, [...loader, script, d.dir, fixture], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, TURNOUT_TEST_CHANGED_VERSION: '2', TURNOUT_TEST_PREPARE_KILL: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (b) => (output += b));
    child.stderr.on('data', (b) => (output += b));
    const signal = await new Promise((resolve) => child.once('close', (_code, s) => resolve(s)));
    expect(signal, output).toBe('SIGKILL');

    expect({ live: fileHash(live), log: fileHash(path.join(d.dir, LOG_FILE)) }).toEqual(before);
    const [left] = d.prepared().filter((f) => f.endsWith('.sqlite'));
    const stopped = new Database(path.join(d.dir, left));
    const state = readPreparedState(stopped);
    stopped.close();
    expect(state).toMatchObject({ done: false, built: ['changed'] });
    // It had got past its first transactions: the one holding the Kill event was lost with it.
    const partly = counter(path.join(d.dir, left), 'changed')!;
    expect(partly.applies).toBeGreaterThan(0);
    expect(partly.applies).toBeLessThan(2_500);

    const reports: string[] = [];
    const prepared = await d.prepare(2, reports);
    expect(prepared).toMatchObject({ resumed: true, built: ['changed'], position: head.commit });
    expect(reports).toContain(`resuming ${left}`);
    expect(prepared.events).toBe(3_000 - partly.applies);
    // Each event applied once, in order, across the two runs.
    expect(counter(prepared.file!, 'changed')).toMatchObject({ applies: 3_000, violations: 0, madeBy: partly.madeBy });
    expect(fileHash(live)).toBe(before.live);
  }, 60_000);

  it('removes the prepared files of another release with a log line, and a start with none rebuilds as before', async () => {
    const d = dataDir();
    const head = await d.append(300);
    const old = await d.server(1);
    await old.waitFor(head);

    const two = await d.prepare(2);
    const reports: string[] = [];
    const three = await d.prepare(3, reports);
    expect(reports).toEqual([`removed ${path.basename(two.file!)}: prepared by a release whose read-model versions differ from this one`]);
    expect(d.prepared()).toEqual([path.basename(three.file!)]);
    await old.stop();

    // Release 4 starts: release 3's file is not its own.
    const startReports: string[] = [];
    expect(await d.adopt(4, startReports)).toBeNull();
    expect(startReports).toEqual([`read models: removed ${path.basename(three.file!)}: prepared by a release whose read-model versions differ from this one`]);
    expect(d.prepared()).toEqual([]);
    const threadReports: string[] = [];
    const started = await d.server(4, threadReports);
    await started.waitFor(head);
    await started.stop();
    expect(threadReports).toContain(`read models to build from the log (${head.commit} events): changed`);
    expect(counter(path.join(d.dir, READ_MODELS_FILE), 'changed')).toMatchObject({ applies: Number(head.commit), violations: 0 });
    await d.log.close();
  }, 60_000);

  it('is not adopted by a start while unfinished, or prepared from another log, and goes with a log line saying so', async () => {
    const d = dataDir();
    const head = await d.append(50);
    const server = await d.server(1);
    await server.waitFor(head);
    await server.stop();
    const refusedFor = async (change: string) => {
      const { file } = await d.prepare(2);
      const db = new Database(file!);
      db.prepare(`UPDATE _meta_prepared SET state = json_set(state, ${change})`).run();
      db.close();
      const reports: string[] = [];
      expect(await d.adopt(2, reports)).toBeNull();
      expect(d.prepared()).toEqual([]);
      return reports;
    };
    expect(await refusedFor(`'$.done', json('false')`)).toEqual([expect.stringMatching(/^read models: removed readmodels\.prepared-\w+\.sqlite: unfinished: its prepare stopped before it caught up with the log$/)]);
    expect(await refusedFor(`'$.stream', 'thing-elsewhere'`)).toEqual([expect.stringMatching(/: prepared from another log than this data dir holds$/)]);
    // The live read models stay the old release's: the start builds what changed, as without a prepare.
    expect(recordedVersions(path.join(d.dir, READ_MODELS_FILE)).get('projector:changed')).toBe(1);
    await d.log.close();
  }, 30_000);

  it('refuses to run beside another prepare, and has nothing to prepare when the live read models hold every version', async () => {
    const d = dataDir();
    const head = await d.append(20);
    const server = await d.server(1);
    await server.waitFor(head);
    await server.stop();

    const other = lockPrepare(d.dir);
    await expect(d.prepare(2)).rejects.toThrow(PrepareBusy);
    other.release();

    const reports: string[] = [];
    expect(await d.prepare(1, reports)).toMatchObject({ file: null, built: [] });
    expect(reports).toEqual(['nothing to prepare: the live read models hold every version of this release']);
    expect(d.prepared()).toEqual([]);
    expect(existsSync(path.join(d.dir, 'turnout.lock'))).toBe(false);
    await d.log.close();
  }, 30_000);
});

/** An erasure begun (its journal's row, as runtime/erasure.ts writes it) until the answer's `end`. */
function beginErasure(dir: string, id: number): { end(): void } {
  const db = new Database(path.join(dir, ERASURE_JOURNAL_FILE));
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE IF NOT EXISTS erasures (id INTEGER PRIMARY KEY, team INTEGER NOT NULL, reason TEXT, source TEXT NOT NULL, key_name TEXT, sealed TEXT NOT NULL, started_at TEXT NOT NULL)');
  db.prepare("INSERT INTO erasures VALUES (?, 1, NULL, 'Public API', NULL, 'sealed:v1:x', ?)").run(id, new Date().toISOString());
  return {
    end() {
      db.prepare('DELETE FROM erasures WHERE id = ?').run(id);
      db.close();
    },
  };
}

describe('prepared read models and an erasure (decisions.md §17)', () => {
  it('a prepare does not start while an erasure is under way, one running stops and removes its file, and a start adopts none', async () => {
    const d = dataDir();
    const head = await d.append(300);
    const server = await d.server(1);
    await server.waitFor(head);
    await server.stop();

    const first = beginErasure(d.dir, 7);
    await expect(d.prepare(2)).rejects.toThrow(ErasureUnderway);
    await expect(d.prepare(2)).rejects.toThrow(/an erasure is under way on this data dir \(constituent 7\)/);
    first.end();
    expect(d.prepared()).toEqual([]);

    // One that begins at a hook of a running prepare: the prepare is refused, its file gone.
    process.env.TURNOUT_TEST_CHANGED_VERSION = '2';
    const erasedAt = async (hook: 'onProgress' | 'onCopy', id: number) => {
      let erasure: { end(): void } | null = null;
      await expect(prepareReadModels(d.dir, { projectorsModule: FIXTURE, [hook]: () => void (erasure ??= beginErasure(d.dir, id)) })).rejects.toThrow(ErasureUnderway);
      expect(erasure).not.toBeNull();
      expect(d.prepared()).toEqual([]);
      erasure!.end();
    };
    // Once the prepare has started: its file goes, whatever it had built.
    await erasedAt('onProgress', 8);
    // While the live file is copied: stopped there, its copy removed too.
    await erasedAt('onCopy', 10);

    // Prepared before it began: a start refuses the file.
    const prepared = await d.prepare(2);
    const third = beginErasure(d.dir, 9);
    const reports: string[] = [];
    expect(await d.adopt(2, reports)).toBeNull();
    expect(reports).toEqual([`read models: removed ${path.basename(prepared.file!)}: built before the erasure of constituent 9, which this start finishes`]);
    expect(d.prepared()).toEqual([]);
    third.end();
    await d.log.close();
  }, 30_000);

  it('an erasure removes every prepared file, waiting for a running prepare to let go, and a rebuild\'s leftovers', async () => {
    const d = dataDir();
    const head = await d.append(50);
    const server = await d.server(1);
    await server.waitFor(head);
    await server.stop();
    const prepared = await d.prepare(2);

    const running = lockPrepare(d.dir);
    const reports: string[] = [];
    let done = false;
    const discarding = discardPrepared(d.dir, (m) => reports.push(m), 10_000).then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(done).toBe(false);
    expect(d.prepared()).toEqual([path.basename(prepared.file!)]);
    running.release();
    await discarding;
    expect(reports).toEqual([`erasure: removed ${path.basename(prepared.file!)}, read models prepared from values the erasure removes; prepare again once it has finished`]);
    expect(d.prepared()).toEqual([]);

    const stuck = lockPrepare(d.dir);
    await expect(discardPrepared(d.dir, () => undefined, 200)).rejects.toThrow(/has not stopped for the erasure within 0 s; the erasure is tried again/);
    stuck.release();

    const live = path.join(d.dir, READ_MODELS_FILE);
    for (const name of [`${live}.rebuild`, `${live}.rebuild-search`, `${live}.rebuild-search-wal`]) writeFileSync(name, 'rows');
    const leftovers: string[] = [];
    removeRebuildLeftovers(d.dir, (m) => leftovers.push(m));
    expect(readdirSync(d.dir).filter((f) => f.includes('.rebuild'))).toEqual([]);
    expect(leftovers).toEqual([
      'read models: removed readmodels.sqlite.rebuild, left by a rebuild that did not finish',
      'read models: removed readmodels.sqlite.rebuild-search, left by a rebuild that did not finish',
    ]);
    await d.log.close();
  }, 30_000);
});
