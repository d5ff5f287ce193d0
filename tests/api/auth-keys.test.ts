import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { API_KEYS } from '../../projections/teams.js';
import { startTestApp, type TestApp } from '../support/app.js';

// On a data dir, as `npm start` runs: the read models are written by other connections (the
// projector thread, the log's inline step), so only the store's change mark can tell this one.
let t: TestApp;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-keys-'));
  t = await startTestApp({ dataDir: dir });
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Spies on the store's reads of the API keys while `fn` runs; answers how many there were. */
async function keyReads(fn: () => Promise<void>): Promise<number> {
  const store = t.runtime.services.store;
  const get = vi.spyOn(store, 'get');
  const find = vi.spyOn(store, 'find');
  try {
    await fn();
    return get.mock.calls.filter((c) => c[0] === API_KEYS).length + find.mock.calls.filter((c) => c[0].collection === API_KEYS).length;
  } finally {
    get.mockRestore();
    find.mockRestore();
  }
}

describe('API keys kept in memory', () => {
  it('reads a key once, then not again while nothing is written, and again after a write', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    expect((await api.get('/constituents')).status).toBe(200);
    expect(await keyReads(async () => {
      for (let i = 0; i < 5; i++) expect((await api.get('/constituents')).status).toBe(200);
    })).toBe(0);
    expect((await api.post('/constituents', { LastName: 'Written' })).status).toBe(201);
    expect(await keyReads(async () => void expect((await api.get('/constituents')).status).toBe(200))).toBe(1);
  });

  it('refuses a key at once once the admin call revoking it has answered', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    for (let i = 0; i < 3; i++) expect((await api.get('/constituents')).status).toBe(200);
    expect((await t.admin.del(`/teams/${team.id}/api-keys/${team.keys.Integration.apiKey.id}`)).status).toBe(200);
    expect((await api.get('/constituents')).status).toBe(401);
  });

  it('refuses a key revoked in the read models by another process, at its next request', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    for (let i = 0; i < 3; i++) expect((await api.get('/constituents')).status).toBe(200);
    const other = new Database(path.join(dir, 'readmodels.sqlite'));
    try {
      other.pragma('busy_timeout = 10000');
      const revoked = other.prepare(`UPDATE "${API_KEYS}" SET doc = json_set(doc, '$.revokedAt', '2026-01-01T00:00:00.000Z') WHERE _key = ?`).run(String(team.keys.Integration.apiKey.id));
      expect(revoked.changes).toBe(1);
    } finally {
      other.close();
    }
    expect((await api.get('/constituents')).status).toBe(401);
  });
});
