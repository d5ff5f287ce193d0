import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const today = () => new Date().toISOString().slice(0, 10);

async function setup() {
  const team = await t.team([
    ['Integration', 'read_write'],
    ['Reader', 'read_only'],
  ]);
  const api = team.api.Integration;
  const person = async (FirstName: string, extra: Record<string, unknown> = {}) => {
    const r = await api.post('/constituents', { FirstName, LastName: 'Doe', Email1: `${FirstName.toLowerCase()}@example.org`, Phone1: '555-867-5309', ...extra });
    expect(r.status, r.raw).toBe(201);
    return r.body.constituent.PkConstituent as number;
  };
  return { ...team, reader: team.api.Reader, api, person };
}

describe('registering a volunteer', () => {
  it('creates one, active as of today, carrying the constituent name and contact', async () => {
    const { api, person } = await setup();
    const c = await person('Ada');
    const r = await api.post('/volunteers', { FkConstituent: c, NumTeeShirtsNeeded: 2 });
    expect(r.status, r.raw).toBe(201);
    expect(r.body.created).toBe(true);
    expect(r.body.volunteer).toMatchObject({
      FkConstituent: c,
      IsActive: true,
      ActiveDate: today(),
      InactiveDate: null,
      IsSuspended: false,
      NumTeeShirtsNeeded: 2,
      ConstituentName: 'Ada Doe',
      Email1: 'ada@example.org',
      Phone1: '5558675309',
      IsStudent: null,
    });
    expect(Object.keys(r.body.volunteer)).toEqual(expect.arrayContaining(['PkVolunteer', 'FkTeam', 'DateCreated', 'DateLastModified']));
  });

  it('answers the existing record with created: false on a second registration', async () => {
    const { api, person } = await setup();
    const c = await person('Bo');
    const first = await api.post('/volunteers', { FkConstituent: c });
    const second = await api.post('/volunteers', { FkConstituent: c, IsStudent: true });
    expect(second.status, second.raw).toBe(200);
    expect(second.body).toEqual({ created: false, volunteer: first.body.volunteer });
  });

  it('creates exactly one volunteer from concurrent registrations of one constituent', async () => {
    const { api, person } = await setup();
    const c = await person('Cy');
    const answers = await Promise.all(Array.from({ length: 10 }, () => api.post('/volunteers', { FkConstituent: c })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(answers.map((a) => a.body.volunteer.PkVolunteer)).size).toBe(1);
    expect((await api.get('/volunteers?search=Cy')).body.total).toBe(1);
  });

  it('refuses a constituent of another team, or none, with invalid_field', async () => {
    const { api } = await setup();
    const other = await setup();
    const theirs = await other.person('Di');
    for (const FkConstituent of [theirs, 999999]) {
      const r = await api.post('/volunteers', { FkConstituent });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'invalid_field', field: 'FkConstituent' });
    }
    expect((await api.post('/volunteers', {})).body.error).toMatchObject({ code: 'missing_field', field: 'FkConstituent' });
  });

  it('validates every field', async () => {
    const { api, person } = await setup();
    const c = await person('Ed');
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ NumTeeShirtsNeeded: 1001 }, 'invalid_field', 'NumTeeShirtsNeeded'],
      [{ NumTeeShirtsNeeded: -1 }, 'invalid_field', 'NumTeeShirtsNeeded'],
      [{ NumTeeShirtsNeeded: '2' }, 'invalid_field', 'NumTeeShirtsNeeded'],
      [{ IsActive: 'true' }, 'invalid_field', 'IsActive'],
      [{ IsActive: null }, 'invalid_field', 'IsActive'],
      [{ ActiveDate: '2026-02-30' }, 'invalid_field', 'ActiveDate'],
      [{ ConstituentName: 'x' }, 'unknown_field', 'ConstituentName'],
      [{ PkVolunteer: 3 }, 'unknown_field', 'PkVolunteer'],
      [{ Category: 1 }, 'unknown_field', 'Category'],
    ];
    for (const [body, code, field] of cases) {
      const r = await api.post('/volunteers', { FkConstituent: c, ...body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error, JSON.stringify(body)).toMatchObject({ code, field });
    }
    expect((await api.get('/volunteers')).body.total).toBe(0);
  });
});

describe('updating a volunteer', () => {
  it('logs deactivation and suspension in the history with their default dates', async () => {
    const { api, admin, person } = await setup();
    const v = (await api.post('/volunteers', { FkConstituent: await person('Flo') })).body.volunteer;
    const d = await api.patch(`/volunteers/${v.PkVolunteer}`, { IsActive: false, IsSuspended: true, IsTeamMember: true });
    expect(d.status, d.raw).toBe(200);
    expect(d.body.volunteer).toMatchObject({ IsActive: false, InactiveDate: today(), IsSuspended: true, SuspensionStartDate: today(), IsTeamMember: true });
    const h = await admin.get(`/history/volunteers/${v.PkVolunteer}`);
    expect(h.status, h.raw).toBe(200);
    expect(h.body.events.map((e: { type: string }) => e.type)).toEqual(['VolunteerCreated', 'VolunteerUpdated', 'VolunteerDeactivated', 'VolunteerSuspended']);
    expect(h.body.events[2].data).toEqual({ id: v.PkVolunteer, InactiveDate: today() });
  });

  it('records nothing for a PATCH that changes nothing', async () => {
    const { api, admin, person } = await setup();
    const v = (await api.post('/volunteers', { FkConstituent: await person('Gus'), IsStudent: true })).body.volunteer;
    const r = await api.patch(`/volunteers/${v.PkVolunteer}`, { IsStudent: true, IsActive: true });
    expect(r.status).toBe(200);
    expect(r.body.volunteer).toEqual(v);
    expect((await admin.get(`/history/volunteers/${v.PkVolunteer}`)).body.events).toHaveLength(1);
  });

  it('refuses FkConstituent, read-only fields, locked records and other teams', async () => {
    const { api, admin, person } = await setup();
    const v = (await api.post('/volunteers', { FkConstituent: await person('Hal') })).body.volunteer;
    expect((await api.patch(`/volunteers/${v.PkVolunteer}`, { FkConstituent: v.FkConstituent })).body.error).toMatchObject({ code: 'invalid_field', field: 'FkConstituent' });
    expect((await api.patch(`/volunteers/${v.PkVolunteer}`, { Email1: 'x@example.org' })).body.error).toMatchObject({ code: 'unknown_field', field: 'Email1' });
    expect((await (await setup()).api.patch(`/volunteers/${v.PkVolunteer}`, { IsStudent: true })).status).toBe(404);
    expect((await admin.post(`/volunteers/${v.PkVolunteer}/lock`)).status).toBe(200);
    const locked = await api.patch(`/volunteers/${v.PkVolunteer}`, { IsStudent: true });
    expect(locked.status).toBe(403);
    expect(locked.body.error.code).toBe('record_protected');
    expect((await api.get(`/volunteers/${v.PkVolunteer}`)).status).toBe(200);
  });

  it('refuses writes with a read-only key', async () => {
    const { reader, person } = await setup();
    const r = await reader.post('/volunteers', { FkConstituent: await person('Ivy') });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('insufficient_scope');
  });
});

describe('reading volunteers', () => {
  it('follows later changes of the linked constituent', async () => {
    const { api, person } = await setup();
    const c = await person('Jo');
    const v = (await api.post('/volunteers', { FkConstituent: c })).body.volunteer;
    await api.patch(`/constituents/${c}`, { FirstName: 'Joanna', Email1: 'JOANNA@example.org', Phone1: '555-123-4567' });
    const r = await api.get(`/volunteers/${v.PkVolunteer}`);
    expect(r.body.volunteer).toMatchObject({ ConstituentName: 'Joanna Doe', Email1: 'JOANNA@example.org', Phone1: '5551234567' });
    const byEmail = await api.get('/volunteers?email=joanna@EXAMPLE.org');
    expect(byEmail.body.volunteers.map((x: { PkVolunteer: number }) => x.PkVolunteer)).toEqual([v.PkVolunteer]);
    expect((await api.get('/volunteers?email=jo@example.org')).body.total).toBe(0);
  });

  it('searches by name or email, filters on isActive, and pages by id', async () => {
    const { api, person } = await setup();
    const ids: number[] = [];
    for (const name of ['Kim', 'Kit', 'Lou']) ids.push((await api.post('/volunteers', { FkConstituent: await person(name) })).body.volunteer.PkVolunteer);
    await api.patch(`/volunteers/${ids[1]}`, { IsActive: false });
    const all = await api.get('/volunteers?search=doe&pageSize=2');
    expect(all.body).toMatchObject({ page: 1, pageSize: 2, total: 3 });
    expect(all.body.volunteers.map((v: { PkVolunteer: number }) => v.PkVolunteer)).toEqual(ids.slice(0, 2));
    expect((await api.get('/volunteers?search=doe&page=2&pageSize=2')).body.volunteers.map((v: { PkVolunteer: number }) => v.PkVolunteer)).toEqual([ids[2]]);
    expect((await api.get('/volunteers?search=KI')).body.total).toBe(2);
    expect((await api.get('/volunteers?search=lou@example')).body.total).toBe(1);
    expect((await api.get('/volunteers?isActive=false')).body.volunteers.map((v: { PkVolunteer: number }) => v.PkVolunteer)).toEqual([ids[1]]);
    expect((await api.get('/volunteers?isActive=true')).body.total).toBe(2);
    expect((await api.get(`/volunteers?search=${ids[2]}`)).body.total).toBe(1);
    expect((await api.get('/volunteers?pageSize=101')).body.error).toMatchObject({ code: 'invalid_field', field: 'pageSize' });
    expect((await api.get('/volunteers?page=0')).body.error).toMatchObject({ code: 'invalid_field', field: 'page' });
  });

  it('is 404 for a deleted volunteer; the constituent remains', async () => {
    const { api, admin, person } = await setup();
    const c = await person('Max');
    const v = (await api.post('/volunteers', { FkConstituent: c })).body.volunteer;
    expect((await admin.del(`/volunteers/${v.PkVolunteer}`)).status).toBe(200);
    expect((await api.get(`/volunteers/${v.PkVolunteer}`)).status).toBe(404);
    expect((await api.get(`/constituents/${c}`)).status).toBe(200);
    const again = await api.post('/volunteers', { FkConstituent: c });
    expect(again.status, again.raw).toBe(201);
    expect(again.body.volunteer.PkVolunteer).not.toBe(v.PkVolunteer);
  });
});
