import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { taskTeam } from './volunteer-support.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('creating and reading tasks', () => {
  it('answers 201 {created, volunteerTask} with every field, null when unset', async () => {
    const { api, task } = await taskTeam(t);
    const r = await api.post('/volunteer-tasks', {
      VolunteerTaskTitle: 'Phone bank',
      TaskStartDateTime: '2030-05-01T17:00:00',
      TaskEndDateTime: '2030-05-01T19:20:00-00:00',
      ContactPhone: '(555) 111-2222',
      DeliveryLocationState: 'ohio',
      Mileage: 12,
      MileageAmount: 7.5,
    });
    expect(r.status, r.raw).toBe(201);
    expect(r.body.created).toBe(true);
    expect(r.body.volunteerTask).toMatchObject({
      VolunteerTaskTitle: 'Phone bank',
      NumberOfHours: 2.33,
      ContactPhone: '5551112222',
      DeliveryLocationState: 'OH',
      FkVolunteer: null,
      VolunteerName: null,
      VolunteerEmail: null,
      VolunteerPhone: null,
      DateAssigned: null,
      FkTaskGroup: null,
      TaskGroupTitle: null,
      FkDistrict: null,
      DistrictName: null,
      FkPrecinct: null,
      PrecinctName: null,
      IsComplete: null,
      Accomodations: null,
    });
    const id = r.body.volunteerTask.PkTask;
    const g = await api.get(`/volunteer-tasks/${id}`);
    expect(g.body).toEqual({ volunteerTask: r.body.volunteerTask });
    expect((await task()).NumberOfHours).toBeNull();
  });

  it('validates every rule, naming the field, and writes nothing', async () => {
    const { api, admin, volunteer } = await taskTeam(t);
    const other = await taskTeam(t);
    const theirVolunteer = await other.volunteer('Zed');
    const theirGroup = (await other.admin.post('/volunteer-task-groups', { TaskGroupTitle: 'Theirs' })).body.volunteerTaskGroup.PkTaskGroup;
    const theirCategory = (await other.admin.post('/lookups/categories', { name: 'Outreach' })).body.id;
    const outcome = (await admin.post('/lookups/outcomes', { name: 'Done' })).body.id;
    await volunteer('Amy');
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ VolunteerTaskTitle: undefined }, 'missing_field', 'VolunteerTaskTitle'],
      [{ VolunteerTaskTitle: '' }, 'invalid_field', 'VolunteerTaskTitle'],
      [{ VolunteerTaskTitle: null }, 'invalid_field', 'VolunteerTaskTitle'],
      [{ VolunteerTaskTitle: 'x'.repeat(1501) }, 'invalid_field', 'VolunteerTaskTitle'],
      [{ TaskStartDateTime: '2030-05-01T10:00:00', TaskEndDateTime: '2030-05-01T09:59:00' }, 'invalid_field', 'TaskEndDateTime'],
      [{ TaskStartDateTime: '2030-02-30T10:00:00' }, 'invalid_field', 'TaskStartDateTime'],
      [{ DateAssigned: '2030-01-01' }, 'invalid_field', 'DateAssigned'],
      [{ FkCategory: theirCategory }, 'invalid_field', 'FkCategory'],
      [{ FkOutcome: outcome + 1000 }, 'invalid_field', 'FkOutcome'],
      [{ FkTaskGroup: theirGroup }, 'invalid_field', 'FkTaskGroup'],
      [{ FkVolunteer: theirVolunteer.id }, 'invalid_field', 'FkVolunteer'],
      [{ FkVolunteer: '1' }, 'invalid_field', 'FkVolunteer'],
      [{ IsPublic: 'true' }, 'invalid_field', 'IsPublic'],
      [{ Mileage: 1.5 }, 'invalid_field', 'Mileage'],
      [{ ContactEmail: 'nope' }, 'invalid_field', 'ContactEmail'],
      [{ ContactPhone: '123' }, 'invalid_field', 'ContactPhone'],
      [{ DeliveryLocationState: 'Atlantis' }, 'invalid_field', 'DeliveryLocationState'],
      [{ NumberOfHours: 2 }, 'unknown_field', 'NumberOfHours'],
      [{ VolunteerName: 'x' }, 'unknown_field', 'VolunteerName'],
      [{ FkDistrict: 1 }, 'unknown_field', 'FkDistrict'],
      [{ PkTask: 1 }, 'unknown_field', 'PkTask'],
    ];
    for (const [extra, code, field] of cases) {
      const r = await api.post('/volunteer-tasks', { VolunteerTaskTitle: 'T', ...extra });
      expect(r.status, JSON.stringify(extra)).toBe(400);
      expect(r.body.error, JSON.stringify(extra)).toMatchObject({ code, field });
    }
    expect((await api.get('/volunteer-tasks')).body.total).toBe(0);
    const ok = await api.post('/volunteer-tasks', { VolunteerTaskTitle: 'T', FkOutcome: outcome });
    expect(ok.status, ok.raw).toBe(201);
    const patch = await api.patch(`/volunteer-tasks/${ok.body.volunteerTask.PkTask}`, { TaskStartDateTime: '2030-05-01T10:00:00', TaskEndDateTime: '2030-04-01T10:00:00' });
    expect(patch.body.error).toMatchObject({ code: 'invalid_field', field: 'TaskEndDateTime' });
  });

  it('updates only sent fields, recomputes NumberOfHours, and records nothing for a no-op', async () => {
    const { api, admin, task } = await taskTeam(t);
    const k = await task({ TaskStartDateTime: '2030-05-01T10:00:00', TaskEndDateTime: '2030-05-01T11:00:00', ContactName: 'Pat' });
    const r = await api.patch(`/volunteer-tasks/${k.PkTask}`, { TaskEndDateTime: '2030-05-01T13:30:00' });
    expect(r.body.volunteerTask).toMatchObject({ NumberOfHours: 3.5, ContactName: 'Pat' });
    const same = await api.patch(`/volunteer-tasks/${k.PkTask}`, { ContactName: 'Pat' });
    expect(same.status).toBe(200);
    expect((await admin.get(`/history/volunteer-tasks/${k.PkTask}`)).body.events).toHaveLength(2);
    const cleared = await api.patch(`/volunteer-tasks/${k.PkTask}`, { TaskEndDateTime: null });
    expect(cleared.body.volunteerTask.NumberOfHours).toBeNull();
  });
});

describe('assigning through PATCH', () => {
  it('assigns, stamps DateAssigned, shows the volunteer, reassigns and unassigns with an audit trail', async () => {
    const { api, admin, volunteer, task } = await taskTeam(t);
    const a = await volunteer('Ann');
    const b = await volunteer('Ben');
    const k = await task();
    const r = await api.patch(`/volunteer-tasks/${k.PkTask}`, { FkVolunteer: a.id });
    expect(r.body.volunteerTask).toMatchObject({
      FkVolunteer: a.id,
      DateAssigned: new Date().toISOString().slice(0, 10),
      VolunteerName: 'Ann Roe',
      VolunteerEmail: 'ann@example.org',
      VolunteerPhone: '5558675309',
    });
    await api.patch(`/volunteer-tasks/${k.PkTask}`, { FkVolunteer: b.id, DateAssigned: '2030-01-02' });
    const un = await api.patch(`/volunteer-tasks/${k.PkTask}`, { FkVolunteer: null });
    expect(un.body.volunteerTask).toMatchObject({ FkVolunteer: null, VolunteerName: null, VolunteerEmail: null, VolunteerPhone: null, DateAssigned: null });
    const h = (await admin.get(`/history/volunteer-tasks/${k.PkTask}`)).body.events;
    // Each change of volunteer: the field change, then its person-event (the audit trail).
    expect(h.map((e: { type: string; data: unknown }) => [e.type, e.data])).toEqual([
      ['VolunteerTaskCreated', expect.anything()],
      ['VolunteerTaskUpdated', { id: k.PkTask, changes: { FkVolunteer: a.id, DateAssigned: expect.any(String) } }],
      ['VolunteerTaskAssigned', { id: k.PkTask, volunteerId: a.id, previousVolunteerId: null, via: 'api', DateAssigned: expect.any(String) }],
      ['VolunteerTaskUpdated', { id: k.PkTask, changes: { FkVolunteer: b.id, DateAssigned: '2030-01-02' } }],
      ['VolunteerTaskAssigned', { id: k.PkTask, volunteerId: b.id, previousVolunteerId: a.id, via: 'api', DateAssigned: '2030-01-02' }],
      ['VolunteerTaskUpdated', { id: k.PkTask, changes: { FkVolunteer: null, DateAssigned: null } }],
      ['VolunteerTaskUnassigned', { id: k.PkTask, volunteerId: b.id, reason: 'unassigned' }],
    ]);
    // One write, one revision (decisions.md §7): each change of volunteer stores two events.
    expect(h.map((e: { revision: number }) => e.revision)).toEqual([1, 2, 2, 3, 3, 4, 4]);
  });

  it('claims with ifOpen, and answers not_open on a taken task with nothing changed', async () => {
    const { api, volunteer, task } = await taskTeam(t);
    const a = await volunteer('Cal');
    const b = await volunteer('Dot');
    const k = await task();
    expect((await api.patch(`/volunteer-tasks/${k.PkTask}?ifOpen=true`, { FkVolunteer: a.id })).status).toBe(200);
    const r = await api.patch(`/volunteer-tasks/${k.PkTask}?ifOpen=true`, { FkVolunteer: b.id, IsComplete: true });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('not_open');
    expect((await api.get(`/volunteer-tasks/${k.PkTask}`)).body.volunteerTask).toMatchObject({ FkVolunteer: a.id, IsComplete: null });
  });

  it('follows later changes of the volunteer constituent', async () => {
    const { api, volunteer, task } = await taskTeam(t);
    const a = await volunteer('Eve');
    const k = await task({ FkVolunteer: a.id });
    expect(k.VolunteerName).toBe('Eve Roe');
    await api.patch(`/constituents/${a.constituent}`, { LastName: 'Stone', Email1: 'eve@stone.example', Phone1: null });
    expect((await api.get(`/volunteer-tasks/${k.PkTask}`)).body.volunteerTask).toMatchObject({
      VolunteerName: 'Eve Stone',
      VolunteerEmail: 'eve@stone.example',
      VolunteerPhone: null,
    });
    expect((await api.get('/volunteer-tasks?search=stone')).body.total).toBe(1);
  });
});

describe('the application surface for tasks', () => {
  it('signs up (not_open when taken), cancels with reason canceled, and locks', async () => {
    const { admin, volunteer, task } = await taskTeam(t);
    const a = await volunteer('Fay');
    const b = await volunteer('Gil');
    const k = await task();
    const s = await admin.post(`/volunteer-tasks/${k.PkTask}/sign-up`, { FkVolunteer: a.id });
    expect(s.status, s.raw).toBe(200);
    expect(s.body.volunteerTask.FkVolunteer).toBe(a.id);
    const taken = await admin.post(`/volunteer-tasks/${k.PkTask}/sign-up`, { FkVolunteer: b.id });
    expect([taken.status, taken.body.error.code]).toEqual([409, 'not_open']);
    expect((await admin.post(`/volunteer-tasks/${k.PkTask}/cancel`, { FkVolunteer: b.id })).body.error.field).toBe('FkVolunteer');
    const c = await admin.post(`/volunteer-tasks/${k.PkTask}/cancel`);
    expect(c.status, c.raw).toBe(200);
    expect(c.body.volunteerTask.FkVolunteer).toBeNull();
    const h = (await admin.get(`/history/volunteer-tasks/${k.PkTask}`)).body.events;
    expect(h.at(-3).data).toMatchObject({ via: 'signup' });
    expect(h.at(-1)).toMatchObject({ type: 'VolunteerTaskUnassigned', data: { reason: 'canceled', volunteerId: a.id } });
    await admin.post(`/volunteer-tasks/${k.PkTask}/lock`);
    const locked = await admin.post(`/volunteer-tasks/${k.PkTask}/sign-up`, { FkVolunteer: b.id });
    expect([locked.status, locked.body.error.code]).toEqual([403, 'record_protected']);
    expect((await admin.patch(`/volunteer-tasks/${k.PkTask}`, { FkDistrict: null })).status).toBe(403);
  });

  it('sets the task geography with names from the lookups', async () => {
    const { api, admin, task } = await taskTeam(t);
    const d = (await admin.post('/lookups/districts', { name: 'District 9' })).body.id;
    const p = (await admin.post('/lookups/precincts', { name: 'Precinct 4' })).body.id;
    const k = await task();
    const r = await admin.patch(`/volunteer-tasks/${k.PkTask}`, { FkDistrict: d, FkPrecinct: p });
    expect(r.status, r.raw).toBe(200);
    expect(r.body.volunteerTask).toMatchObject({ FkDistrict: d, DistrictName: 'District 9', FkPrecinct: p, PrecinctName: 'Precinct 4' });
    expect((await api.get(`/volunteer-tasks/${k.PkTask}`)).body.volunteerTask.DistrictName).toBe('District 9');
    expect((await admin.patch(`/volunteer-tasks/${k.PkTask}`, { FkDistrict: p })).body.error).toMatchObject({ code: 'invalid_field', field: 'FkDistrict' });
    expect((await admin.patch(`/volunteer-tasks/${k.PkTask}`, { VolunteerTaskTitle: 'x' })).body.error).toMatchObject({ code: 'unknown_field' });
  });

  it('unassigns the tasks of a deleted volunteer', async () => {
    const { api, admin, volunteer, task } = await taskTeam(t);
    const a = await volunteer('Hank');
    const k1 = await task({ FkVolunteer: a.id });
    const k2 = await task({ FkVolunteer: a.id });
    expect((await admin.del(`/volunteers/${a.id}`)).status).toBe(200);
    for (const k of [k1, k2]) {
      expect((await api.get(`/volunteer-tasks/${k.PkTask}`)).body.volunteerTask).toMatchObject({ FkVolunteer: null, VolunteerName: null });
      expect((await admin.get(`/history/volunteer-tasks/${k.PkTask}`)).body.events.at(-1)).toMatchObject({
        type: 'VolunteerTaskUnassigned',
        data: { volunteerId: a.id, reason: 'volunteer_deleted' },
      });
    }
    expect((await admin.del(`/volunteer-tasks/${k1.PkTask}`)).status).toBe(200);
    expect((await api.get(`/volunteer-tasks/${k1.PkTask}`)).status).toBe(404);
  });
});

describe('listing tasks', () => {
  it('filters, searches, orders by start (nulls last) then id, pages and sums hours over the filtered set', async () => {
    const { api, admin, volunteer, task } = await taskTeam(t);
    const a = await volunteer('Ida');
    const g = (await admin.post('/volunteer-task-groups', { TaskGroupTitle: 'Spring drive' })).body.volunteerTaskGroup.PkTaskGroup;
    const late = await task({ VolunteerTaskTitle: 'Late', TaskStartDateTime: '2030-06-01T10:00:00', TaskEndDateTime: '2030-06-01T12:00:00', FkTaskGroup: g });
    const none = await task({ VolunteerTaskTitle: 'Unscheduled' });
    const early = await task({ VolunteerTaskTitle: 'Early', TaskStartDateTime: '2030-05-01T10:00:00', TaskEndDateTime: '2030-05-01T11:15:00', IsComplete: true, FkVolunteer: a.id });
    const mid = await task({ VolunteerTaskTitle: 'Mid', DeliveryLocationCity: 'Dayton', TaskStartDateTime: '2030-05-15T10:00:00', TaskEndDateTime: '2030-05-15T10:30:00' });
    const ids = (r: { body: { volunteerTasks: Array<{ PkTask: number }> } }) => r.body.volunteerTasks.map((x) => x.PkTask);
    const all = await api.get('/volunteer-tasks?pageSize=2');
    expect(all.body).toMatchObject({ page: 1, pageSize: 2, total: 4, totalHours: 3.75 });
    expect(ids(all)).toEqual([early.PkTask, mid.PkTask]);
    expect(ids(await api.get('/volunteer-tasks?pageSize=2&page=2'))).toEqual([late.PkTask, none.PkTask]);
    expect(late.TaskGroupTitle).toBe('Spring drive');
    expect((await api.get('/volunteer-tasks?isComplete=true')).body).toMatchObject({ total: 1, totalHours: 1.25 });
    expect(ids(await api.get('/volunteer-tasks?isComplete=false'))).toEqual([mid.PkTask, late.PkTask, none.PkTask]);
    expect(ids(await api.get(`/volunteer-tasks?volunteerId=${a.id}`))).toEqual([early.PkTask]);
    expect(ids(await api.get(`/volunteer-tasks?taskGroupId=${g}`))).toEqual([late.PkTask]);
    expect(ids(await api.get('/volunteer-tasks?search=dayton'))).toEqual([mid.PkTask]);
    expect(ids(await api.get('/volunteer-tasks?search=ida%20roe'))).toEqual([early.PkTask]);
    expect(ids(await api.get(`/volunteer-tasks?search=${none.PkTask}`))).toEqual([none.PkTask]);
    expect((await api.get('/volunteer-tasks?search=nothing-like-this')).body).toMatchObject({ total: 0, totalHours: 0, volunteerTasks: [] });
    expect((await api.get('/volunteer-tasks?isComplete=maybe')).body.error).toMatchObject({ code: 'invalid_field', field: 'isComplete' });
    expect((await api.get('/volunteer-tasks?pageSize=0')).body.error).toMatchObject({ code: 'invalid_field', field: 'pageSize' });
  });
});

describe('task groups', () => {
  it('are created in the application and read-only in the API', async () => {
    const { api, admin } = await taskTeam(t);
    const d = (await admin.post('/lookups/districts', { name: 'North' })).body.id;
    const r = await admin.post('/volunteer-task-groups', { TaskGroupTitle: 'Fall canvass', GroupLocationName: 'Union Hall', FkDistrict: d });
    expect(r.status, r.raw).toBe(201);
    const g = r.body.volunteerTaskGroup;
    expect(Object.keys(g).sort()).toEqual(
      ['DateCreated', 'DateLastModified', 'DistrictName', 'FkDistrict', 'FkPrecinct', 'FkTeam', 'GroupLocationName', 'PkTaskGroup', 'PrecinctName', 'TaskGroupTitle'].sort(),
    );
    expect(g).toMatchObject({ TaskGroupTitle: 'Fall canvass', DistrictName: 'North', FkPrecinct: null, PrecinctName: null });
    expect((await api.get(`/volunteer-task-groups/${g.PkTaskGroup}`)).body).toEqual({ volunteerTaskGroup: g });
    await admin.post('/volunteer-task-groups', { TaskGroupTitle: 'Phones' });
    const s = await api.get('/volunteer-task-groups?search=union');
    expect(s.body).toMatchObject({ total: 1, page: 1, pageSize: 25 });
    expect(s.body.volunteerTaskGroups[0].PkTaskGroup).toBe(g.PkTaskGroup);
    expect((await api.get('/volunteer-task-groups')).body.total).toBe(2);
    expect((await api.post('/volunteer-task-groups', { TaskGroupTitle: 'x' })).status).toBe(404);
    expect((await admin.post('/volunteer-task-groups', {})).body.error).toMatchObject({ code: 'missing_field', field: 'TaskGroupTitle' });
    expect((await admin.post('/volunteer-task-groups', { TaskGroupTitle: 'x', FkPrecinct: d })).body.error).toMatchObject({ code: 'invalid_field', field: 'FkPrecinct' });
    expect((await (await taskTeam(t)).api.get(`/volunteer-task-groups/${g.PkTaskGroup}`)).status).toBe(404);
  });
});
