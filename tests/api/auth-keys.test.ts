import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { API_KEYS } from '../../projections/teams.js';
import { startTestApp, type TestApp } from '../support/app.js';

// On a data dir, as `npm start` runs: the read models are written by other threads (the projector
// thread), which bumps the process's API-key mark after each commit that
// applied an API-key event (projections/api-key-mark.ts). Where other processes share the data
// dir (NATS), the store's change mark stands in: tests/production/multiprocess.test.ts.
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
  it('reads a key once, then not again while records are written, and again after an API-key event', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    expect((await api.get('/constituents')).status).toBe(200);
    expect(await keyReads(async () => {
      for (let i = 0; i < 5; i++) expect((await api.get('/constituents')).status).toBe(200);
      expect((await api.post('/constituents', { LastName: 'Written' })).status).toBe(201);
      expect((await api.get('/constituents')).status).toBe(200);
    })).toBe(0);
    expect((await t.admin.post(`/teams/${team.id}/api-keys`, { name: 'Another', scope: 'read_only' })).status).toBe(201);
    expect(await keyReads(async () => void expect((await api.get('/constituents')).status).toBe(200))).toBe(1);
  });

  it('refuses a key at once once the admin call revoking it has answered', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    for (let i = 0; i < 3; i++) expect((await api.get('/constituents')).status).toBe(200);
    expect((await t.admin.del(`/teams/${team.id}/api-keys/${team.keys.Integration.apiKey.id}`)).status).toBe(200);
    expect((await api.get('/constituents')).status).toBe(401);
  });

  it('refuses each key at once after revocations that race requests with it', async () => {
    const team = await t.team([['A', 'read_write'], ['B', 'read_write'], ['C', 'read_only']]);
    for (const name of ['A', 'B', 'C']) {
      const api = team.api[name];
      const busy = Array.from({ length: 10 }, () => api.get('/constituents'));
      const revoked = await t.admin.del(`/teams/${team.id}/api-keys/${team.keys[name].apiKey.id}`);
      expect(revoked.status).toBe(200);
      await Promise.all(busy);
      expect((await api.get('/constituents')).status).toBe(401);
    }
  });

  it('takes a key created a moment ago at its first request, while another key of the team is cached', async () => {
    const team = await t.team();
    for (let i = 0; i < 3; i++) expect((await team.api.Integration.get('/constituents')).status).toBe(200);
    const created = await t.admin.post(`/teams/${team.id}/api-keys`, { name: 'Fresh', scope: 'read_write' });
    expect(created.status).toBe(201);
    const r = await t.app.inject({ method: 'GET', url: '/api/v1/constituents', headers: { authorization: `Bearer ${created.body.key}` } });
    expect(r.statusCode).toBe(200);
    expect((await team.api.Integration.get('/constituents')).status).toBe(200);
  });
});
