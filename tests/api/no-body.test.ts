import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/**
 * Operations that take no body (decisions.md §3: an unknown field is 400 unknown_field naming it):
 * a body with a field is refused and nothing is done; no body, null or {} is the operation.
 */
describe('admin operations that take no body', () => {
  it('refuse a field sent anyway, and do nothing; with no body, null or {} they run', async () => {
    const team = await t.team();
    const id = (await team.api.Integration.post('/constituents', { FirstName: 'Ann', LastName: 'Lee' })).body.constituent.PkConstituent as number;
    const refused = await team.admin.post(`/constituents/${id}/lock`, { bogus: 1 });
    expect([refused.status, refused.body.error]).toEqual([400, expect.objectContaining({ code: 'unknown_field', field: 'bogus' })]);
    expect((await team.api.Integration.patch(`/constituents/${id}`, { FirstName: 'Still' })).status).toBe(200); // not locked
    for (const body of [undefined, null, {}]) {
      const lock = await team.admin.post(`/constituents/${id}/lock`, body);
      expect(lock.status, JSON.stringify(body)).toBe(200);
      expect((await team.admin.post(`/constituents/${id}/unlock`, body)).status).toBe(200);
    }
    const del = await team.admin.del(`/constituents/${id}`, { bogus: 1 });
    expect([del.status, del.body.error?.field]).toEqual([400, 'bogus']);
    expect((await team.api.Integration.get(`/constituents/${id}`)).status).toBe(200);

    const key = await team.admin.post('/api-keys', { name: 'Spare', scope: 'read_only' });
    const keyId = key.body.apiKey.id as number;
    const revoke = await team.admin.del(`/api-keys/${keyId}`, { bogus: 1 });
    expect([revoke.status, revoke.body.error?.field]).toEqual([400, 'bogus']);
    expect((await team.admin.get('/api-keys')).body.apiKeys.find((k: { id: number }) => k.id === keyId).revokedAt).toBeNull();
    expect((await team.admin.del(`/api-keys/${keyId}`)).status).toBe(200);
  });
});

describe('a value outside a list of allowed ones', () => {
  it('is refused naming every allowed value, not only the first', async () => {
    const team = await t.team();
    const r = await team.admin.get('/activity?source=bogus');
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'invalid_field', field: 'source' });
    expect(r.body.error.message).toMatch(/^source must be one of "Public API", "[^"]+"(, "[^"]+")*\.$/);
    const scope = await team.admin.post('/api-keys', { name: 'k', scope: 'admin' });
    expect(scope.body.error.message).toBe('scope must be one of "read_write", "read_only".');
  });
});
