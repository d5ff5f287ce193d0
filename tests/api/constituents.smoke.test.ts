import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('a first constituent', () => {
  it('is created and read back', async () => {
    const { api } = await t.team();
    const r = await api.Integration.post('/constituents', { FirstName: 'Ada', LastName: 'Lovelace', Email1: 'ada@example.org', Phone1: '(555) 867-5309' });
    expect(r.status, r.raw).toBe(201);
    expect(r.body.constituent).toMatchObject({ ConstituentName: 'Ada Lovelace', Phone1: '5558675309', Nickname: null });
    console.log(r.raw);
    const g = await api.Integration.get(`/constituents/${r.body.constituent.PkConstituent}`);
    expect(g.status, g.raw).toBe(200);
    expect(g.body.constituent.Email1).toBe('ada@example.org');
  });
});

describe('lookups', () => {
  it('lists what the application added, per team, and the fixed time zones', async () => {
    const a = await t.team();
    const b = await t.team();
    const s = await a.admin.post('/lookups/statuses', { name: 'Confirmed' });
    expect(s.status, s.raw).toBe(201);
    expect((await a.admin.post('/lookups/statuses', { name: 'confirmed' })).body.error.code).toBe('invalid_field');
    expect((await a.admin.post('/lookups/nope', { name: 'x' })).status).toBe(400);
    const la = await a.api.Integration.get('/lookups');
    expect(la.body.statuses).toEqual([{ id: s.body.id, name: 'Confirmed' }]);
    expect(la.body.districts).toEqual([]);
    expect((await b.api.Integration.get('/lookups')).body.statuses).toEqual([]);
    const tz = await a.api.Integration.get('/lookups/event-time-zones');
    expect(tz.body.eventTimeZones.map((z: { name: string }) => z.name)).toContain('America/Chicago');
  });
});
