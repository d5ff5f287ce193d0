import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { Position } from '../../domain/shared/events.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { SqliteReadCore } from '../../projections/store/sqlite-core.js';
import { DataDirBusy } from '../../runtime/datadir-lock.js';
import { LOG_FILE, READ_MODELS_FILE, startProjectorThread } from '../../runtime/read-models.js';
import { rebuildReadModels } from '../../runtime/rebuild.js';
import { client, startTestApp } from '../support/app.js';
import type { CounterDoc } from '../support/counting-projectors.js';
import { walIndex } from '../support/wal-index.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'turnout-readmodels-'));
  dirs.push(d);
  return d;
};

const FIXTURE = pathToFileURL(path.resolve(import.meta.dirname, '../support/counting-projectors.ts')).href;
const metadata = { team: 1, source: 'Public API' as const, keyName: 'Test', correlationId: 'c', at: new Date().toISOString() };

/** A data dir with a log file, and helpers to run counting projector threads on it. */
function dataDir() {
  const dir = tempDir();
  const log = new SqliteEventLog(path.join(dir, LOG_FILE));
  let n = 0;
  return {
    dir,
    log,
    /** Appends `count` events, one append each, over a few streams, all at once. */
    async append(count: number, type = 'Thing'): Promise<Position> {
      const done = await Promise.all(Array.from({ length: count }, () => log.append(`thing-${++n % 7}`, [{ type, data: { n }, metadata }], 'any')));
      return done.reduce((a, b) => (b.position.commit > a.position.commit ? b : a)).position;
    },
    start(env: Record<string, string> = {}, options: Parameters<typeof startProjectorThread>[2] = {}) {
      Object.assign(process.env, env);
      const files = { logFile: path.join(dir, LOG_FILE), readFile: path.join(dir, READ_MODELS_FILE) };
      return startProjectorThread(files, (p) => log.countAfter(p), { ...options, settings: { projectorsModule: FIXTURE, pollMs: 20, retryInitialMs: 20, retryMaxMs: 100, ...options.settings } });
    },
    counter(name: string): CounterDoc {
      const core = new SqliteReadCore(path.join(dir, READ_MODELS_FILE), { laidOutElsewhere: true });
      core.define({ name, idField: 'id' });
      const doc = core.get(name, 'n') as CounterDoc | null;
      core.close();
      return doc ?? { id: 'n', applies: 0, violations: 0, last: '0', madeBy: '' };
    },
  };
}

afterAll(() => {
  for (const k of ['TURNOUT_TEST_ALPHA_VERSION', 'TURNOUT_TEST_BETA_VERSION', 'TURNOUT_TEST_FUSE', 'TURNOUT_TEST_CRASH']) delete process.env[k];
});

describe('the projector thread', () => {
  it('resumes after a restart from its checkpoint and applies no event twice', async () => {
    const d = dataDir();
    let head = await d.append(300);
    const first = await d.start();
    await first.waitFor(head);
    await first.stop();
    expect(d.counter('alpha')).toMatchObject({ applies: 300, violations: 0 });

    head = await d.append(200);
    const second = await d.start();
    await second.waitFor(head);
    await second.stop();
    expect(d.counter('alpha')).toMatchObject({ applies: 500, violations: 0, last: String(head.commit) });
    await d.log.close();
  });

  it('keeps one read model when two threads (two processes) follow one data dir while it is written', async () => {
    const d = dataDir();
    const [a, b] = [await d.start(), await d.start()];
    let head = await d.append(50);
    for (let i = 0; i < 10; i++) {
      head = await d.append(40);
      // Either thread may have applied it: each answers once the shared database holds it.
      await Promise.all([a.waitFor(head), b.waitFor(head)]);
    }
    await Promise.all([a.stop(), b.stop()]);
    expect(d.counter('alpha')).toMatchObject({ applies: 450, violations: 0 });
    expect(d.counter('beta')).toMatchObject({ applies: 450, violations: 0 });
    await d.log.close();
  });

  it('rebuilds a read model whose version went up, and leaves the others as they were', async () => {
    const d = dataDir();
    const head = await d.append(120);
    const first = await d.start({ TURNOUT_TEST_ALPHA_VERSION: '1', TURNOUT_TEST_BETA_VERSION: '1' });
    await first.waitFor(head);
    await first.stop();
    const [alpha, beta] = [d.counter('alpha'), d.counter('beta')];

    const reports: string[] = [];
    const second = await d.start({ TURNOUT_TEST_BETA_VERSION: '2' }, { report: (m) => reports.push(m) });
    await second.waitFor(head);
    await second.stop();
    expect(reports).toContain('read models to build from the log (120 events): beta');
    expect(d.counter('alpha')).toEqual(alpha);
    expect(d.counter('beta')).toMatchObject({ applies: 120, violations: 0 });
    expect(d.counter('beta').madeBy).not.toBe(beta.madeBy);
    await d.log.close();
  });

  it('reports failed while a projector throws, applies what came before, and never passes the failing event', async () => {
    const d = dataDir();
    const fuse = path.join(d.dir, 'fuse');
    writeFileSync(fuse, '');
    const before = await d.append(10);
    await d.log.append('thing-boom', [{ type: 'Boom', data: {}, metadata }], 'any');
    const head = await d.append(5);
    const thread = await d.start({ TURNOUT_TEST_FUSE: fuse }, { report: () => undefined, waitTimeoutMs: 60_000 });
    await thread.waitFor(before);
    await expect.poll(async () => (await thread.status()).state).toBe('failed');
    const reached = thread.waitFor(head);
    await new Promise((r) => setTimeout(r, 200));
    expect(d.counter('alpha')).toMatchObject({ applies: 10, last: String(before.commit) });
    expect((await thread.status()).behind).toBe(6);

    rmSync(fuse);
    await reached;
    expect(await thread.status()).toEqual({ name: 'read-models', state: 'caught_up', behind: 0 });
    expect(d.counter('alpha')).toMatchObject({ applies: 16, violations: 0 });
    await thread.stop();
    await d.log.close();
  });
});

describe('a projector thread that dies', () => {
  const crash = (d: ReturnType<typeof dataDir>) => d.log.append('thing-crash', [{ type: 'Crash', data: {}, metadata }], 'any');

  it('is started again, reports reconnecting until the new thread has caught up, and answers the writes waiting meanwhile', async () => {
    const d = dataDir();
    const fuse = path.join(d.dir, 'crash');
    writeFileSync(fuse, 'once');
    const reports: string[] = [];
    // A restart wait long enough to see the outage from here, however busy the machine.
    const thread = await d.start({ TURNOUT_TEST_CRASH: fuse }, { report: (m) => reports.push(m), waitTimeoutMs: 60_000, restart: { initialMs: 400, maxMs: 400 } });
    const before = await d.append(10);
    await thread.waitFor(before);
    await crash(d);
    const head = await d.append(5);
    const reached = thread.waitFor(head);
    await expect.poll(async () => (await thread.status()).state, { interval: 10 }).toBe('reconnecting');
    expect(reports).toContainEqual(expect.stringMatching(/^the read-model projector thread stopped: the projector thread crashed; restarting it in \d+ ms$/));

    await reached;
    await expect.poll(() => thread.status()).toEqual({ name: 'read-models', state: 'caught_up', behind: 0 });
    expect(d.counter('alpha')).toMatchObject({ applies: 16, violations: 0, last: String(head.commit) });
    expect(reports).toContain('read models: the restarted projector thread has caught up');
    await thread.stop();
    await d.log.close();
  });

  it('dying again and again, is restarted after doubling waits up to the longest, and no more once stopping', async () => {
    const d = dataDir();
    const fuse = path.join(d.dir, 'crash');
    writeFileSync(fuse, 'always');
    await crash(d);
    const head = await d.append(3);
    const deaths: Array<{ at: number; delay: number }> = [];
    const report = (m: string) => {
      const delay = /restarting it in (\d+) ms$/.exec(m)?.[1];
      if (delay) deaths.push({ at: Date.now(), delay: Number(delay) });
    };
    const thread = await d.start({ TURNOUT_TEST_CRASH: fuse }, { report, waitTimeoutMs: 60_000, restart: { initialMs: 20, maxMs: 160 } });
    const reached = thread.waitFor(head);
    await expect.poll(() => deaths.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(6);
    const nominal = [20, 40, 80, 160, 160, 160];
    deaths.slice(0, 6).forEach(({ delay }, i) => {
      expect(delay).toBeGreaterThanOrEqual(nominal[i] * 0.9);
      expect(delay).toBeLessThanOrEqual(Math.min(nominal[i] * 1.1, 160));
    });
    // Each thread started only after the wait told when its predecessor died (timers never fire early).
    for (let i = 1; i < 6; i++) expect(deaths[i].at - deaths[i - 1].at).toBeGreaterThanOrEqual(deaths[i - 1].delay - 1);
    expect((await thread.status()).state).toBe('reconnecting');

    // The write waiting all along is answered by the first thread that gets past the event.
    rmSync(fuse);
    await reached;
    expect(d.counter('alpha')).toMatchObject({ applies: 4, violations: 0 });

    writeFileSync(fuse, 'always');
    await crash(d);
    await expect.poll(() => deaths.length, { timeout: 30_000 }).toBeGreaterThan(6);
    await thread.stop();
    const told = deaths.length;
    await new Promise((r) => setTimeout(r, 400));
    expect(deaths.length).toBe(told);
    await d.log.close();
  });
});

describe("the log's writer thread, telling the projector thread each commit", () => {
  /** A projector thread that never polls and gives up on a wait long before it would: only the log's word moves it. */
  async function toldBy(d: ReturnType<typeof dataDir>) {
    const thread = await d.start({}, { report: () => undefined, waitTimeoutMs: 10_000, settings: { pollMs: 600_000 } });
    expect(await thread.attachLog(d.log)).toBe(true);
    return thread;
  }

  it('has the projector thread apply each commit as it is told, without a poll or a message from the writes that wait', async () => {
    const d = dataDir();
    const thread = await toldBy(d);
    for (let i = 1; i <= 5; i++) {
      const head = await d.append(20);
      await thread.waitFor(head);
      expect(d.counter('alpha')).toMatchObject({ applies: 20 * i, violations: 0, last: String(head.commit) });
    }
    expect(await thread.status()).toEqual({ name: 'read-models', state: 'caught_up', behind: 0 });
    await thread.stop();
    await d.log.close();
  });

  it("keeps the read database's WAL short while it applies every commit", async () => {
    const d = dataDir();
    const uncopied = () => {
      const { frames, copied } = walIndex(path.join(d.dir, READ_MODELS_FILE));
      return frames - copied;
    };
    const thread = await d.start({}, { report: () => undefined, waitTimeoutMs: 60_000 });
    expect(await thread.attachLog(d.log)).toBe(true);
    // 400 commits: past SQLite's default of a checkpoint every 1,000 pages, which the thread's connection turns off.
    let head = await d.append(4);
    for (let i = 0; i < 399; i++) head = await d.append(4);
    await thread.waitFor(head);
    await expect.poll(uncopied, { timeout: 5_000 }).toBe(0);
    expect(d.counter('alpha')).toMatchObject({ applies: 1_600, violations: 0, last: String(head.commit) });
    await thread.stop();
    await d.log.close();
  });

  it('tells a restarted projector thread on a channel of its own', async () => {
    const d = dataDir();
    const thread = await toldBy(d);
    await thread.waitFor(await d.append(5));
    await thread.kill();
    await expect.poll(async () => (await thread.status()).state, { timeout: 10_000 }).toBe('caught_up');
    const head = await d.append(5);
    await thread.waitFor(head);
    expect(d.counter('alpha')).toMatchObject({ applies: 10, violations: 0, last: String(head.commit) });
    await thread.stop();
    await d.log.close();
  });
});

describe('the embedded default on a data dir', () => {
  it('reads every write at once, one after another and twenty at a time', async () => {
    const dir = tempDir();
    const t = await startTestApp({ dataDir: dir });
    const team = await t.team();
    const api = team.api.Integration;
    for (let i = 0; i < 30; i++) {
      const made = await api.post('/constituents', { FirstName: `Quick${i}`, LastName: 'Reader', Email1: `quick${i}@example.org` });
      expect(made.status).toBe(201);
      const id = made.body.constituent.PkConstituent;
      expect((await api.get(`/constituents/${id}`)).body.constituent.FirstName).toBe(`Quick${i}`);
      expect((await api.patch(`/constituents/${id}`, { Nickname: `N${i}` })).status).toBe(200);
      expect((await api.get(`/constituents?search=quick${i}@`)).body.constituents.map((c: { Nickname: string }) => c.Nickname)).toEqual([`N${i}`]);
    }
    const made = await Promise.all(Array.from({ length: 20 }, (_, i) => api.post('/constituents', { FirstName: `Racer${i}`, LastName: 'Together' })));
    const reads = await Promise.all(made.map((m) => api.get(`/constituents/${m.body.constituent.PkConstituent}`)));
    expect(reads.map((r) => r.status)).toEqual(made.map(() => 200));
    expect((await api.get('/constituents?search=together')).body.total).toBe(20);
    expect((await api.get('/constituents')).body.total).toBe(50);

    // A running server holds the data dir: an offline rebuild refuses it.
    await expect(rebuildReadModels(dir)).rejects.toThrow(DataDirBusy);
    await t.close();

    const progress: number[] = [];
    const { events } = await rebuildReadModels(dir, { onProgress: (p) => progress.push(p.done) });
    expect(events).toBeGreaterThanOrEqual(82); // the team, its key, 50 creates and 30 updates
    expect(progress.at(-1)).toBe(events);
    const again = await startTestApp({ dataDir: dir });
    const api2 = client(again.app, '/api/v1', team.keys.Integration.key);
    expect((await api2.get('/constituents?search=together')).body.total).toBe(20);
    expect((await api2.get('/constituents?search=quick7@')).body.constituents[0].Nickname).toBe('N7');
    await again.close();
  });
});
