import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('API keys', () => {
  it('answers a missing, malformed, unknown or revoked key with the same 401', async () => {
    const team = await t.team();
    const key: string = team.keys.Integration.key;
    const tampered = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    const revoked = await t.admin.post(`/teams/${team.id}/api-keys`, { name: 'Old', scope: 'read_write' });
    await t.admin.del(`/teams/${team.id}/api-keys/${revoked.body.apiKey.id}`);
    const bodies = [];
    for (const header of [undefined, 'Basic abc', 'Bearer', 'Bearer nonsense', `Bearer ${tampered}`, `Bearer ${revoked.body.key}`, `Bearer ${key}`]) {
      const r = await t.app.inject({ method: 'GET', url: '/api/v1/constituents', headers: header ? { authorization: header } : {} });
      bodies.push([r.statusCode, r.body]);
    }
    const ok = bodies.pop();
    expect(ok![0]).toBe(200);
    for (const b of bodies) expect(b).toEqual(bodies[0]);
    expect(bodies[0][0]).toBe(401);
    expect(JSON.parse(bodies[0][1] as string).error.code).toBe('unauthorized');
  });

  it('shows a key once, and lists keys without it', async () => {
    const team = await t.team();
    const created = team.keys.Integration;
    expect(created.key).toMatch(/^tko_[0-9a-f]{12}_/);
    expect(created.apiKey).toMatchObject({ name: 'Integration', scope: 'read_write', revokedAt: null, prefix: created.key.split('_').slice(0, 2).join('_') });
    const list = await t.admin.get(`/teams/${team.id}/api-keys`);
    expect(list.body.apiKeys).toHaveLength(1);
    expect(JSON.stringify(list.body)).not.toContain(created.key);
    // The secret is what follows `tko_<12 hex>_`; base64url, so it may itself contain "_".
    expect(JSON.stringify(list.body)).not.toContain(created.key.slice('tko_'.length + 12 + 1));
  });

  it('revokes a key at once', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    expect((await api.get('/constituents')).status).toBe(200);
    const r = await t.admin.del(`/teams/${team.id}/api-keys/${team.keys.Integration.apiKey.id}`);
    expect(r.status).toBe(200);
    expect(r.body.apiKey.revokedAt).toEqual(expect.any(String));
    expect((await api.get('/constituents')).status).toBe(401);
  });

  it('refuses writes with a Read only key and lets it read', async () => {
    const team = await t.team([['Writer', 'read_write'], ['Reporting', 'read_only']]);
    const c = await team.api.Writer.post('/constituents', { LastName: 'X' });
    const ro = team.api.Reporting;
    expect((await ro.get(`/constituents/${c.body.constituent.PkConstituent}`)).status).toBe(200);
    for (const r of [await ro.post('/constituents', { LastName: 'Y' }), await ro.patch(`/constituents/${c.body.constituent.PkConstituent}`, { LastName: 'Y' })]) {
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('insufficient_scope');
    }
  });

  it("keeps each account's data to its own keys", async () => {
    const a = await t.team();
    const b = await t.team();
    const c = await a.api.Integration.post('/constituents', { LastName: 'Private', Email1: 'private@example.org' });
    const id = c.body.constituent.PkConstituent;
    expect((await b.api.Integration.get(`/constituents/${id}`)).status).toBe(404);
    expect((await b.api.Integration.patch(`/constituents/${id}`, { LastName: 'Mine' })).status).toBe(404);
    expect((await b.api.Integration.get('/constituents?email=private@example.org')).body.total).toBe(0);
    expect((await b.api.Integration.get(`/constituents?search=${id}`)).body.total).toBe(0);
    expect((await b.api.Integration.get('/constituents?search=Private')).body.total).toBe(0);
  });

  it('checks key names and scopes', async () => {
    const team = await t.team();
    expect((await t.admin.post(`/teams/${team.id}/api-keys`, { name: 'X', scope: 'admin' })).body.error).toMatchObject({ code: 'invalid_field', field: 'scope' });
    expect((await t.admin.post(`/teams/${team.id}/api-keys`, { scope: 'read_only' })).body.error).toMatchObject({ code: 'missing_field', field: 'name' });
  });
});

describe('the application surface', () => {
  it('wants the admin token', async () => {
    const wrong = client(t.app, '/admin/v1', 'not-the-token');
    const r = await wrong.post('/teams', { name: 'X' });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('unauthorized');
    expect((await client(t.app, '/admin/v1').post('/teams', { name: 'X' })).status).toBe(401);
  });

  it('answers an unknown team with not_found', async () => {
    const r = await t.admin.post('/teams/999999/api-keys', { name: 'X', scope: 'read_only' });
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('not_found');
  });

  it('does not take an API key as admin token nor the admin token as an API key', async () => {
    const team = await t.team();
    expect((await client(t.app, '/admin/v1', team.keys.Integration.key).post('/teams', { name: 'X' })).status).toBe(401);
    expect((await client(t.app, '/api/v1', 'test-admin-token').get('/constituents')).status).toBe(401);
  });
});
