import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../api/app.js';
import { readiness } from '../../api/routes/health.js';
import { IdAllocator } from '../../commands/ids.js';
import { decideCreate, validateCreate } from '../../domain/constituent/decide.js';
import { constituentEvolver, constituentStream } from '../../domain/constituent/events.js';
import { NO_STREAM } from '../../eventlog/port.js';
import { testConfig } from '../../runtime/config.js';
import { READ_MODELS_FILE } from '../../runtime/read-models.js';
import { openRuntime } from '../../runtime/wiring.js';
import { startTestApp } from '../support/app.js';

const EVENTS = 5_000;
let dir: string;
let key: string;

/** A data directory whose log holds a team, a key and EVENTS constituents, appended straight to the log. */
beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-start-'));
  const t = await startTestApp({ dataDir: dir });
  const team = await t.team([['K', 'read_write']]);
  key = team.keys.K.key;
  const { log } = t.runtime.services;
  const ids = new IdAllocator(log, EVENTS);
  const metadata = { team: team.id, source: 'Public API' as const, keyName: 'K', correlationId: 'seed', at: new Date().toISOString() };
  const appends: Array<Promise<unknown>> = [];
  for (let i = 0; i < EVENTS; i++) {
    const id = await ids.next('constituent');
    const events = decideCreate({ id, fields: validateCreate({ LastName: `Seed${i}` }) }, constituentEvolver.initial());
    appends.push(log.append(constituentStream(id), events.map((e) => ({ ...e, metadata })), NO_STREAM));
  }
  await Promise.all(appends);
  await t.close();
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The read models are gone (a new projector version, a lost file): the next start builds them from the log. */
function dropReadModels(): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(path.join(dir, READ_MODELS_FILE + suffix), { force: true });
}

describe('starting on a data directory whose read models must be built from a long log', () => {
  it('is not ready, with the read models catching up and how far behind, until they have caught up', async () => {
    dropReadModels();
    const runtime = await openRuntime(testConfig({ dataDir: dir }), { follow: false });
    try {
      const before = await readiness(runtime.services);
      expect(before.code).toBe(503);
      expect(before.body.followers).toHaveLength(1);
      expect(before.body.followers[0]).toMatchObject({ name: 'read-models', state: 'catching_up' });
      expect(before.body.followers[0].behind).toBeGreaterThan(0);
      await runtime.startFollowing();
      await runtime.readModelsCaughtUp();
      // Caught up, but the process says it is still starting its other parts.
      expect((await readiness(runtime.services)).code).toBe(503);
      runtime.started();
      expect(await readiness(runtime.services)).toEqual({ code: 200, body: { status: 'ready', followers: [{ name: 'read-models', state: 'caught_up', behind: 0 }] } });
    } finally {
      await runtime.close();
    }
  });

  it('keeps the event loop turning while the read models catch up, so the port answers meanwhile', async () => {
    dropReadModels();
    const runtime = await openRuntime(testConfig({ dataDir: dir }), { follow: false });
    try {
      let turns = 0;
      const ticker = setInterval(() => turns++, 1);
      await runtime.startFollowing();
      await runtime.readModelsCaughtUp();
      clearInterval(ticker);
      expect(turns).toBeGreaterThan(0);
    } finally {
      await runtime.close();
    }
  });

  it('starts with nothing to catch up once they are built: the read models persist', async () => {
    const runtime = await openRuntime(testConfig({ dataDir: dir }), { follow: false });
    try {
      await runtime.startFollowing();
      await runtime.readModelsCaughtUp();
      runtime.started();
      expect(await readiness(runtime.services)).toEqual({ code: 200, body: { status: 'ready', followers: [{ name: 'read-models', state: 'caught_up', behind: 0 }] } });
    } finally {
      await runtime.close();
    }
  });
});

describe('a request that arrives while the read models catch up after a start', () => {
  async function started(startWaitMs: number) {
    const runtime = await openRuntime(testConfig({ dataDir: dir }), { follow: false });
    const app = await buildApp(runtime.services, { startWaitMs });
    const get = (url: string) => app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
    return { runtime, app, get, close: async () => (await app.close(), await runtime.close()) };
  }

  it('waits for them and is then answered from them', async () => {
    const s = await started(30_000);
    try {
      const answer = s.get('/api/v1/constituents?search=Seed4999');
      expect((await s.get('/healthz')).statusCode).toBe(200);
      await s.runtime.startFollowing();
      const r = await answer;
      expect(r.statusCode).toBe(200);
      expect(r.json().total).toBe(1);
    } finally {
      await s.close();
    }
  });

  it('is answered 503 not_ready with Retry-After when they take longer than the start wait', async () => {
    const s = await started(50);
    try {
      const r = await s.get('/api/v1/constituents?search=Seed4999');
      expect(r.statusCode).toBe(503);
      expect(r.headers['retry-after']).toBe('5');
      expect(r.json()).toEqual({ error: { code: 'not_ready', message: expect.stringContaining('still catching up with its event log') } });
      expect((await s.get('/readyz')).statusCode).toBe(503);
    } finally {
      await s.close();
    }
  });
});
