import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('the activity log', () => {
  it("labels every change through a key as Public API with the key's name, newest first", async () => {
    const team = await t.team([['Mailchimp sync', 'read_write']]);
    const api = team.api['Mailchimp sync'];
    const c = (await api.post('/constituents', { LastName: 'Okafor' })).body.constituent;
    await api.patch(`/constituents/${c.PkConstituent}`, { FirstName: 'Ngozi' });
    await api.get(`/constituents/${c.PkConstituent}`);
    await team.admin.post(`/constituents/${c.PkConstituent}/lock`);
    const r = await team.admin.get('/activity');
    expect(r.status).toBe(200);
    const entries = r.body.activity.filter((a: { recordType: string }) => a.recordType === 'constituent');
    expect(entries).toEqual([
      { at: expect.any(String), source: 'Application', keyName: null, action: 'locked', recordType: 'constituent', recordId: c.PkConstituent },
      { at: expect.any(String), source: 'Public API', keyName: 'Mailchimp sync', action: 'updated', recordType: 'constituent', recordId: c.PkConstituent },
      { at: expect.any(String), source: 'Public API', keyName: 'Mailchimp sync', action: 'created', recordType: 'constituent', recordId: c.PkConstituent },
    ]);
  });

  it("shows one team's activity only", async () => {
    const a = await t.team();
    const b = await t.team();
    await a.api.Integration.post('/constituents', { LastName: 'A' });
    const bs = (await b.admin.get('/activity')).body.activity;
    expect(bs.some((x: { recordType: string }) => x.recordType === 'constituent')).toBe(false);
  });
});

describe('record history', () => {
  it('replays the record stream with positions, revisions, sources and data', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    const c = (await api.post('/constituents', { LastName: 'Ito', Email1: 'ito@example.org' })).body.constituent;
    await api.patch(`/constituents/${c.PkConstituent}`, { Email1: 'ken@example.org' });
    const h = await team.admin.get(`/history/constituents/${c.PkConstituent}`);
    expect(h.status).toBe(200);
    const [created, updated] = h.body.events;
    // Revisions count writes from 1 (decisions.md §7, changed by issue 15 item 7; was the stream revision from 0).
    expect(created).toMatchObject({ revision: 1, type: 'ConstituentCreated', source: 'Public API', keyName: 'Integration', data: { id: c.PkConstituent } });
    expect(updated).toMatchObject({ revision: 2, type: 'ConstituentUpdated', data: { changes: { Email1: 'ken@example.org' } } });
    expect(updated.position).toBeGreaterThan(created.position);
  });

  it("is not found for another team's record or an unknown resource", async () => {
    const a = await t.team();
    const b = await t.team();
    const c = (await a.api.Integration.post('/constituents', { LastName: 'A' })).body.constituent;
    expect((await b.admin.get(`/history/constituents/${c.PkConstituent}`)).status).toBe(404);
    expect((await a.admin.get(`/history/widgets/${c.PkConstituent}`)).status).toBe(404);
  });
});

describe('locks', () => {
  it('makes writes 403 record_protected while reads still work, until unlocked', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    const c = (await api.post('/constituents', { LastName: 'Locked', Email1: 'locked@example.org' })).body.constituent;
    expect((await team.admin.post(`/constituents/${c.PkConstituent}/lock`)).status).toBe(200);
    const w = await api.patch(`/constituents/${c.PkConstituent}`, { LastName: 'Changed' });
    expect(w.status).toBe(403);
    expect(w.body.error.code).toBe('record_protected');
    const up = await api.post('/constituents?mode=upsert&matchOn=email', { LastName: 'Changed', Email1: 'locked@example.org' });
    expect(up.body.error.code).toBe('record_protected');
    expect((await api.get(`/constituents/${c.PkConstituent}`)).body.constituent.LastName).toBe('Locked');
    expect((await api.get('/constituents?search=Locked')).body.total).toBe(1);
    await team.admin.post(`/constituents/${c.PkConstituent}/unlock`);
    expect((await api.patch(`/constituents/${c.PkConstituent}`, { LastName: 'Changed' })).status).toBe(200);
  });

  it('answers not_found for records of another team', async () => {
    const a = await t.team();
    const b = await t.team();
    const c = (await a.api.Integration.post('/constituents', { LastName: 'A' })).body.constituent;
    expect((await b.admin.post(`/constituents/${c.PkConstituent}/lock`)).status).toBe(404);
  });
});

describe('deleting a constituent from the application', () => {
  it('makes it 404 and takes it off every list', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    const c = (await api.post('/constituents', { LastName: 'Gone', Email1: 'gone@example.org' })).body.constituent;
    expect((await team.admin.del(`/constituents/${c.PkConstituent}`)).status).toBe(200);
    expect((await api.get(`/constituents/${c.PkConstituent}`)).status).toBe(404);
    expect((await api.get('/constituents?search=Gone')).body.total).toBe(0);
    expect((await api.get('/constituents?email=gone@example.org')).body.total).toBe(0);
    expect((await api.patch(`/constituents/${c.PkConstituent}`, { LastName: 'Back' })).status).toBe(404);
  });
});
