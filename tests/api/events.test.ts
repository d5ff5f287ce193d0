import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const gala = { EventTitle: 'Spring Gala', StartDate: '2026-05-01', StartTime: '6:00 PM', EndTime: '21:30' };

describe('creating an event', () => {
  it('answers 201 with the event read back: times as HH:MM, states as codes, unset fields null', async () => {
    const { api } = await t.team();
    const r = await api.Integration.post('/events', {
      ...gala,
      EndDate: '2026-05-01',
      RegistrationOpenDateTime: '2026-03-01T09:00:00',
      RegistrationCloseDateTime: '2026-04-30T12:00:00-05:00',
      MaxGuests: 0,
      Theme: 'Blooms',
      ContactName: 'Grace Hopper',
      ContactEmail: 'Grace@Example.org',
      ContactPhone: '1 (555) 867-5309',
      EventLocation: 'Town Hall',
      EventLocationState: 'ohio',
      FkTimeZone: 2,
      IsPortal: true,
    });
    expect(r.status, r.raw).toBe(201);
    expect(r.body.created).toBe(true);
    const e = r.body.event;
    expect(e).toMatchObject({
      EventTitle: 'Spring Gala',
      StartTime: '18:00',
      EndTime: '21:30',
      RegistrationCloseDateTime: '2026-04-30T17:00:00',
      ContactEmail: 'Grace@Example.org',
      ContactPhone: '5558675309',
      EventLocationState: 'OH',
      FkTimeZone: 2,
      MaxGuests: 0,
      WebinarLink: null,
      FkStatus: null,
      IsPublic: false,
      IsTicketSales: false,
      FkChapter: null,
      DistrictName: null,
    });
    expect(e.PkEvent).toBeGreaterThan(0);
    expect(e.DateCreated).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
    const g = await api.Integration.get(`/events/${e.PkEvent}`);
    expect(g.status).toBe(200);
    expect(g.body.event).toEqual(e);
  });

  it('seeds the notification templates and applies the public form defaults in the same append as EventCreated', async () => {
    const { api, admin } = await t.team();
    const appends = vi.spyOn(t.runtime.services.log, 'append');
    const id = (await api.Integration.post('/events', gala)).body.event.PkEvent;
    const toEvent = appends.mock.calls.filter(([stream]) => stream === `event-${id}`);
    appends.mockRestore();
    // One append carries all three: the creation happens whole or not at all.
    expect(toEvent.map(([, events]) => events.map((e) => e.type))).toEqual([['EventCreated', 'EventNotificationTemplatesSeeded', 'EventPublicFormDefaultsApplied']]);
    const h = await admin.get(`/history/events/${id}`);
    expect(h.status, h.raw).toBe(200);
    const types = h.body.events.map((e: { type: string }) => e.type);
    expect(types).toEqual(['EventCreated', 'EventNotificationTemplatesSeeded', 'EventPublicFormDefaultsApplied']);
    expect(new Set(h.body.events.map((e: { position: number }) => e.position)).size).toBe(3);
    expect(h.body.events[1].data.templates.map((x: { kind: string }) => x.kind)).toContain('registration_confirmation');
    expect(h.body.events[2].data.defaults).toMatchObject({ IsPublic: false, IsTicketSales: false });
    expect(h.body.events.every((e: { source: string }) => e.source === 'Public API')).toBe(true);
  });

  it('is on the list at once (read-your-writes)', async () => {
    const { api } = await t.team();
    for (let i = 0; i < 5; i++) {
      const id = (await api.Integration.post('/events', { EventTitle: `Quick ${i}` })).body.event.PkEvent;
      const l = await api.Integration.get('/events?search=quick');
      expect(l.body.events.map((e: { PkEvent: number }) => e.PkEvent)).toContain(id);
    }
  });

  it('needs EventTitle, not blank, at most 150 characters', async () => {
    const { api } = await t.team();
    const missing = await api.Integration.post('/events', { StartDate: '2026-01-01' });
    expect([missing.status, missing.body.error.code, missing.body.error.field]).toEqual([400, 'missing_field', 'EventTitle']);
    for (const bad of [null, '   ', 'x'.repeat(151), 5]) {
      const r = await api.Integration.post('/events', { EventTitle: bad });
      expect([r.status, r.body.error.code, r.body.error.field], JSON.stringify(bad)).toEqual([400, 'invalid_field', 'EventTitle']);
    }
    expect((await api.Integration.post('/events', { EventTitle: 'x'.repeat(150) })).status).toBe(201);
  });

  it.each([
    [{ Theme: 'x'.repeat(501) }, 'Theme'],
    [{ StartDate: '2026-02-30' }, 'StartDate'],
    [{ StartDate: '05/01/2026' }, 'StartDate'],
    [{ StartTime: '25:00' }, 'StartTime'],
    [{ StartTime: '13:00 PM' }, 'StartTime'],
    [{ RegistrationOpenDateTime: '2026-02-29T10:00:00' }, 'RegistrationOpenDateTime'],
    [{ MaxGuests: -1 }, 'MaxGuests'],
    [{ MaxGuests: 2.5 }, 'MaxGuests'],
    [{ MaxGuests: '10' }, 'MaxGuests'],
    [{ MaxGuests: 1e300 }, 'MaxGuests'],
    [{ MaxGuests: 2 ** 53 }, 'MaxGuests'],
    [{ IsPortal: 'true' }, 'IsPortal'],
    [{ ContactEmail: 'not-an-email' }, 'ContactEmail'],
    [{ ContactPhone: '555-1234' }, 'ContactPhone'],
    [{ EventLocationState: 'Narnia' }, 'EventLocationState'],
    [{ FkTimeZone: 999 }, 'FkTimeZone'],
    [{ StartDate: '2026-05-02', EndDate: '2026-05-01' }, 'EndDate'],
    [{ StartDate: '2026-05-01', EndDate: '2026-05-01', StartTime: '18:00', EndTime: '5:00 PM' }, 'EndTime'],
    [{ StartDate: '2026-05-01', StartTime: '18:00', EndTime: '17:59' }, 'EndTime'],
    [{ RegistrationOpenDateTime: '2026-03-02T00:00:00', RegistrationCloseDateTime: '2026-03-01T23:59:59' }, 'RegistrationCloseDateTime'],
  ])('refuses %j as invalid_field naming %s, and writes nothing', async (body, field) => {
    const { api } = await t.team();
    const before = (await api.Integration.post('/events', { EventTitle: 'Before' })).body.event.PkEvent;
    const head = await t.runtime.services.log.head();
    const r = await api.Integration.post('/events', { EventTitle: 'Bad', ...body });
    expect([r.status, r.body.error.code, r.body.error.field], r.raw).toEqual([400, 'invalid_field', field]);
    expect(await t.runtime.services.log.head()).toEqual(head);
    // Not even an id is taken.
    expect((await api.Integration.post('/events', { EventTitle: 'After' })).body.event.PkEvent).toBe(before + 1);
    expect((await api.Integration.get('/events')).body.total).toBe(2);
  });

  it('accepts an end on a later day before the start time, and equal start and end', async () => {
    const { api } = await t.team();
    expect((await api.Integration.post('/events', { EventTitle: 'Overnight', StartDate: '2026-05-01', EndDate: '2026-05-02', StartTime: '22:00', EndTime: '02:00' })).status).toBe(201);
    expect((await api.Integration.post('/events', { EventTitle: 'Instant', StartDate: '2026-05-01', EndDate: '2026-05-01', StartTime: '10:00', EndTime: '10:00 AM' })).status).toBe(201);
  });

  it.each(['IsPublic', 'IsTicketSales', 'Budget', 'Attendance', 'PublicFormDesign', 'IsLocked', 'IsViewOnly', 'FkDistrict', 'DistrictName', 'PkEvent', 'Bogus'])(
    'refuses the not-writable field %s as unknown_field',
    async (field) => {
      const { api } = await t.team();
      const r = await api.Integration.post('/events', { EventTitle: 'Nope', [field]: true });
      expect([r.status, r.body.error.code, r.body.error.field], r.raw).toEqual([400, 'unknown_field', field]);
      expect((await api.Integration.get('/events')).body.total).toBe(0);
    },
  );
});

describe('lookup ids on events', () => {
  it("accepts the team's own ids and refuses another team's or unknown ones, naming the field, writing nothing", async () => {
    const a = await t.team();
    const b = await t.team();
    const ids: Record<string, number> = {};
    for (const [list, field] of [['statuses', 'FkStatus'], ['eventTypes', 'FkEventType'], ['categories', 'FkCategory'], ['seasons', 'FkSeason']]) {
      ids[field] = (await a.admin.post(`/lookups/${list}`, { name: `A ${list}` })).body.id;
      const other = (await b.admin.post(`/lookups/${list}`, { name: `B ${list}` })).body.id;
      const r = await a.api.Integration.post('/events', { EventTitle: 'Wrong list', [field]: other });
      expect([r.status, r.body.error.code, r.body.error.field], r.raw).toEqual([400, 'invalid_field', field]);
    }
    // A status id is not an event type.
    const cross = await a.api.Integration.post('/events', { EventTitle: 'Cross', FkEventType: ids.FkStatus });
    expect(cross.body.error.field).toBe('FkEventType');
    expect((await a.api.Integration.get('/events')).body.total).toBe(0);
    const ok = await a.api.Integration.post('/events', { EventTitle: 'Right', ...ids });
    expect(ok.status, ok.raw).toBe(201);
    expect(ok.body.event).toMatchObject(ids);
    const bad = await a.api.Integration.patch(`/events/${ok.body.event.PkEvent}`, { FkSeason: 987654 });
    expect([bad.status, bad.body.error.field]).toEqual([400, 'FkSeason']);
    const cleared = await a.api.Integration.patch(`/events/${ok.body.event.PkEvent}`, { FkSeason: null, FkStatus: null });
    expect(cleared.body.event).toMatchObject({ FkSeason: null, FkStatus: null, FkCategory: ids.FkCategory });
  });
});

describe('updating an event', () => {
  it('changes only the sent fields and re-checks the rules on the result', async () => {
    const { api, admin } = await t.team();
    const e = (await api.Integration.post('/events', { ...gala, EndDate: '2026-05-01', Theme: 'Blooms' })).body.event;
    const r = await api.Integration.patch(`/events/${e.PkEvent}`, { Theme: null, EventLocationCity: 'Dayton', EndTime: '11:00 PM' });
    expect(r.status, r.raw).toBe(200);
    expect(r.body.event).toMatchObject({ EventTitle: 'Spring Gala', Theme: null, EventLocationCity: 'Dayton', EndTime: '23:00', StartTime: '18:00' });
    const late = await api.Integration.patch(`/events/${e.PkEvent}`, { StartTime: '23:30' });
    expect([late.status, late.body.error.code, late.body.error.field]).toEqual([400, 'invalid_field', 'EndTime']);
    const after = await api.Integration.patch(`/events/${e.PkEvent}`, { StartDate: '2026-05-03' });
    expect(after.body.error.field).toBe('EndDate');
    expect((await api.Integration.patch(`/events/${e.PkEvent}`, { EventTitle: null })).body.error).toMatchObject({ code: 'invalid_field', field: 'EventTitle' });
    expect((await api.Integration.patch(`/events/${e.PkEvent}`, { IsPublic: true })).body.error).toMatchObject({ code: 'unknown_field', field: 'IsPublic' });
    expect((await api.Integration.get(`/events/${e.PkEvent}`)).body.event).toEqual(r.body.event);
    const types = (await admin.get(`/history/events/${e.PkEvent}`)).body.events.map((x: { type: string }) => x.type);
    expect(types.filter((x: string) => x === 'EventUpdated')).toHaveLength(1);
  });

  it('records nothing for a PATCH that changes nothing', async () => {
    const { api, admin } = await t.team();
    const e = (await api.Integration.post('/events', gala)).body.event;
    const r = await api.Integration.patch(`/events/${e.PkEvent}`, { StartTime: '18:00', EventTitle: 'Spring Gala' });
    expect(r.status).toBe(200);
    expect(r.body.event.DateLastModified).toBe(e.DateLastModified);
    expect((await admin.get(`/history/events/${e.PkEvent}`)).body.events).toHaveLength(3);
  });

  it("is 404 for another team's event, and 403 insufficient_scope for a read-only key", async () => {
    const a = await t.team([['W', 'read_write'], ['R', 'read_only']]);
    const b = await t.team();
    const e = (await a.api.W.post('/events', gala)).body.event;
    expect((await b.api.Integration.get(`/events/${e.PkEvent}`)).status).toBe(404);
    expect((await b.api.Integration.patch(`/events/${e.PkEvent}`, { Theme: 'x' })).status).toBe(404);
    expect((await a.api.R.post('/events', gala)).body.error.code).toBe('insufficient_scope');
    expect((await a.api.R.patch(`/events/${e.PkEvent}`, { Theme: 'x' })).body.error.code).toBe('insufficient_scope');
    expect((await a.api.R.get(`/events/${e.PkEvent}`)).status).toBe(200);
  });
});

describe('locking and deleting events through the application', () => {
  it('refuses writes to a locked event with 403 record_protected, reads still work, unlock restores writes', async () => {
    const { api, admin } = await t.team();
    const e = (await api.Integration.post('/events', gala)).body.event;
    expect((await admin.post(`/events/${e.PkEvent}/lock`)).status).toBe(200);
    const r = await api.Integration.patch(`/events/${e.PkEvent}`, { Theme: 'Locked out' });
    expect([r.status, r.body.error.code]).toEqual([403, 'record_protected']);
    expect((await admin.patch(`/events/${e.PkEvent}`, { FkChapter: 1, ChapterName: 'North' })).status).toBe(403);
    expect((await api.Integration.get(`/events/${e.PkEvent}`)).body.event.Theme).toBeNull();
    await admin.post(`/events/${e.PkEvent}/unlock`);
    expect((await api.Integration.patch(`/events/${e.PkEvent}`, { Theme: 'Open again' })).body.event.Theme).toBe('Open again');
  });

  it('makes a deleted event 404 and takes it off every list', async () => {
    const { api, admin } = await t.team();
    const keep = (await api.Integration.post('/events', { EventTitle: 'Keep me' })).body.event;
    const gone = (await api.Integration.post('/events', { EventTitle: 'Delete me' })).body.event;
    expect((await admin.del(`/events/${gone.PkEvent}`)).status).toBe(200);
    expect((await api.Integration.get(`/events/${gone.PkEvent}`)).status).toBe(404);
    expect((await api.Integration.patch(`/events/${gone.PkEvent}`, { Theme: 'x' })).status).toBe(404);
    const all = await api.Integration.get('/events');
    expect(all.body.events.map((x: { PkEvent: number }) => x.PkEvent)).toEqual([keep.PkEvent]);
    expect((await api.Integration.get(`/events?search=${gone.PkEvent}`)).body.total).toBe(0);
    expect((await admin.del(`/events/${gone.PkEvent}`)).status).toBe(404);
  });
});
