import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const ids = (r: { body: { events: Array<{ PkEvent: number }> } }) => r.body.events.map((e) => e.PkEvent);

describe('listing events', () => {
  it('puts the newest StartDate first, then the higher id, and undated events last', async () => {
    const { api } = await t.team();
    const mk = async (EventTitle: string, StartDate?: string) => (await api.Integration.post('/events', { EventTitle, StartDate })).body.event.PkEvent as number;
    const undated = await mk('Undated');
    const old = await mk('Old', '2025-01-10');
    const a = await mk('Same day A', '2026-06-01');
    const b = await mk('Same day B', '2026-06-01');
    const newest = await mk('Newest', '2027-01-01');
    const r = await api.Integration.get('/events');
    expect(r.body).toMatchObject({ page: 1, pageSize: 25, total: 5 });
    expect(ids(r)).toEqual([newest, b, a, old, undated]);
  });

  it('pages, and refuses a page size over 100 or a page below 1 naming the parameter', async () => {
    const { api } = await t.team();
    const made: number[] = [];
    for (let i = 0; i < 7; i++) made.push((await api.Integration.post('/events', { EventTitle: `E${i}`, StartDate: `2026-01-0${i + 1}` })).body.event.PkEvent);
    const p2 = await api.Integration.get('/events?page=2&pageSize=3');
    expect(p2.body).toMatchObject({ page: 2, pageSize: 3, total: 7 });
    expect(ids(p2)).toEqual([made[3], made[2], made[1]]);
    expect((await api.Integration.get('/events?page=3&pageSize=3')).body.events).toHaveLength(1);
    for (const [q, field] of [['pageSize=101', 'pageSize'], ['page=0', 'page'], ['pageSize=abc', 'pageSize']]) {
      const r = await api.Integration.get(`/events?${q}`);
      expect([r.status, r.body.error.code, r.body.error.field], q).toEqual([400, 'invalid_field', field]);
    }
  });

  it('searches title, contact and location case-insensitively, literally, and an all-digit search matches the id', async () => {
    const { api } = await t.team();
    const mk = async (body: object) => (await api.Integration.post('/events', body)).body.event.PkEvent as number;
    const title = await mk({ EventTitle: 'Harvest Supper (50%)' });
    const contact = await mk({ EventTitle: 'A', ContactName: 'Mary Seacole', ContactEmail: 'mary@clinic.org', ContactPhone: '555-222-3333' });
    const place = await mk({ EventTitle: 'B', EventLocation: 'Grange Hall', EventLocationAddress: '12 Elm Street', EventLocationCity: 'Springfield', EventLocationZipCode: '45501', EventLocationState: 'Ohio' });
    const s = async (q: string) => ids(await api.Integration.get(`/events?search=${encodeURIComponent(q)}`)).sort();
    expect(await s('harvest')).toEqual([title]);
    expect(await s('(50%)')).toEqual([title]);
    expect(await s('.*')).toEqual([]);
    expect(await s('SEACOLE')).toEqual([contact]);
    expect(await s('clinic.org')).toEqual([contact]);
    expect(await s('2223333')).toEqual([contact]);
    expect(await s('grange')).toEqual([place]);
    expect(await s('elm st')).toEqual([place]);
    expect(await s('springfield')).toEqual([place]);
    expect(await s('45501')).toEqual([place]);
    expect(await s('OH')).toEqual([place]);
    expect(await s(String(title))).toContain(title);
  });

  it('keeps events whose StartDate lies in startDate..endDate inclusive, and refuses impossible dates', async () => {
    const { api } = await t.team();
    const mk = async (StartDate: string | null) => (await api.Integration.post('/events', { EventTitle: 'x', StartDate })).body.event.PkEvent as number;
    const d1 = await mk('2026-03-01');
    const d2 = await mk('2026-03-15');
    const d3 = await mk('2026-03-31');
    await mk('2026-04-01');
    await mk(null);
    expect(ids(await api.Integration.get('/events?startDate=2026-03-01&endDate=2026-03-31'))).toEqual([d3, d2, d1]);
    expect(ids(await api.Integration.get('/events?startDate=2026-03-15&endDate=2026-03-15'))).toEqual([d2]);
    expect(ids(await api.Integration.get('/events?endDate=2026-03-14'))).toEqual([d1]);
    expect((await api.Integration.get('/events?startDate=2026-03-02')).body.total).toBe(3);
    const bad = await api.Integration.get('/events?startDate=2026-02-30');
    expect([bad.status, bad.body.error.code, bad.body.error.field]).toEqual([400, 'invalid_field', 'startDate']);
    expect((await api.Integration.get('/events?endDate=tomorrow')).body.error.field).toBe('endDate');
  });

  it('filters by statusId, eventTypeId, categoryId and seasonId, combined with each other and with search and dates', async () => {
    const { api, admin } = await t.team();
    const add = async (list: string, name: string) => (await admin.post(`/lookups/${list}`, { name })).body.id as number;
    const open = await add('statuses', 'Open');
    const closed = await add('statuses', 'Closed');
    const gala = await add('eventTypes', 'Gala');
    const fund = await add('categories', 'Fundraiser');
    const spring = await add('seasons', 'Spring');
    const mk = async (body: object) => (await api.Integration.post('/events', { EventTitle: 'Event', ...body })).body.event.PkEvent as number;
    const e1 = await mk({ FkStatus: open, FkEventType: gala, FkCategory: fund, FkSeason: spring, StartDate: '2026-04-01', EventLocationCity: 'Akron' });
    const e2 = await mk({ FkStatus: open, FkEventType: gala, StartDate: '2026-05-01' });
    const e3 = await mk({ FkStatus: closed, FkEventType: gala, FkSeason: spring, StartDate: '2026-06-01' });
    const q = async (s: string) => ids(await api.Integration.get(`/events?${s}`));
    expect(await q(`statusId=${open}`)).toEqual([e2, e1]);
    expect(await q(`eventTypeId=${gala}`)).toEqual([e3, e2, e1]);
    expect(await q(`categoryId=${fund}`)).toEqual([e1]);
    expect(await q(`seasonId=${spring}`)).toEqual([e3, e1]);
    expect(await q(`seasonId=${spring}&statusId=${open}`)).toEqual([e1]);
    expect(await q(`statusId=${open}&eventTypeId=${gala}&startDate=2026-04-15`)).toEqual([e2]);
    expect(await q(`statusId=${open}&search=akron`)).toEqual([e1]);
    expect(await q(`statusId=${closed}&search=akron`)).toEqual([]);
    expect((await api.Integration.get('/events?statusId=x')).body.error.field).toBe('statusId');
    expect((await api.Integration.get('/events?colour=red')).body.error).toMatchObject({ code: 'unknown_field', field: 'colour' });
  });

  it("never shows another team's events", async () => {
    const a = await t.team();
    const b = await t.team();
    await a.api.Integration.post('/events', { EventTitle: 'Private party' });
    expect((await b.api.Integration.get('/events?search=private')).body.total).toBe(0);
    expect((await b.api.Integration.get('/events')).body.total).toBe(0);
  });
});

describe('event geography from the application', () => {
  it('sets chapter, division and department as id + name pairs and district and precinct from the lookups', async () => {
    const { api, admin } = await t.team();
    const district = (await admin.post('/lookups/districts', { name: 'District 9' })).body.id;
    const precinct = (await admin.post('/lookups/precincts', { name: 'Precinct 4' })).body.id;
    const e = (await api.Integration.post('/events', { EventTitle: 'Rally' })).body.event;
    const r = await admin.patch(`/events/${e.PkEvent}`, {
      FkChapter: 10, ChapterName: 'North', FkDivision: 20, DivisionName: 'Ops', FkDepartment: 30, DepartmentName: 'Outreach',
      FkDistrict: district, FkPrecinct: precinct,
    });
    expect(r.status, r.raw).toBe(200);
    const geo = { FkChapter: 10, ChapterName: 'North', FkDivision: 20, DivisionName: 'Ops', FkDepartment: 30, DepartmentName: 'Outreach', FkDistrict: district, DistrictName: 'District 9', FkPrecinct: precinct, PrecinctName: 'Precinct 4' };
    expect(r.body.event).toMatchObject(geo);
    expect((await api.Integration.get(`/events/${e.PkEvent}`)).body.event).toMatchObject(geo);
    expect((await api.Integration.get('/events')).body.events[0]).toMatchObject(geo);
    const cleared = await admin.patch(`/events/${e.PkEvent}`, { FkChapter: null, FkDistrict: null });
    expect(cleared.body.event).toMatchObject({ FkChapter: null, ChapterName: null, FkDistrict: null, DistrictName: null, DivisionName: 'Ops' });
    const renamed = await admin.patch(`/events/${e.PkEvent}`, { DivisionName: 'Operations' });
    expect(renamed.body.event).toMatchObject({ FkDivision: 20, DivisionName: 'Operations' });
  });

  it('refuses a district or precinct not in the team lookups, an id without its name, a name without an id, and names of lookups', async () => {
    const a = await t.team();
    const b = await t.team();
    const theirs = (await b.admin.post('/lookups/districts', { name: 'Elsewhere' })).body.id;
    const e = (await a.api.Integration.post('/events', { EventTitle: 'Rally' })).body.event;
    const cases: Array<[object, string, string]> = [
      [{ FkDistrict: theirs }, 'invalid_field', 'FkDistrict'],
      [{ FkPrecinct: 424242 }, 'invalid_field', 'FkPrecinct'],
      [{ FkChapter: 1 }, 'missing_field', 'ChapterName'],
      [{ ChapterName: 'North' }, 'invalid_field', 'ChapterName'],
      [{ FkChapter: 1, ChapterName: '' }, 'invalid_field', 'ChapterName'],
      [{ FkChapter: null, ChapterName: 'North' }, 'invalid_field', 'ChapterName'],
      [{ DistrictName: 'X' }, 'unknown_field', 'DistrictName'],
      [{ EventTitle: 'Renamed' }, 'unknown_field', 'EventTitle'],
      [{ FkChapter: '1', ChapterName: 'North' }, 'invalid_field', 'FkChapter'],
    ];
    for (const [body, code, field] of cases) {
      const r = await a.admin.patch(`/events/${e.PkEvent}`, body);
      expect([r.status, r.body.error.code, r.body.error.field], JSON.stringify(body)).toEqual([400, code, field]);
    }
    expect((await b.admin.patch(`/events/${e.PkEvent}`, { FkChapter: 1, ChapterName: 'N' })).status).toBe(404);
    expect((await a.admin.get(`/history/events/${e.PkEvent}`)).body.events).toHaveLength(3);
  });

  it('refuses geography in the public API as unknown_field', async () => {
    const { api } = await t.team();
    const e = (await api.Integration.post('/events', { EventTitle: 'Rally' })).body.event;
    for (const f of ['FkChapter', 'ChapterName', 'FkPrecinct', 'PrecinctName'])
      expect((await api.Integration.patch(`/events/${e.PkEvent}`, { [f]: 1 })).body.error).toMatchObject({ code: 'unknown_field', field: f });
  });
});
