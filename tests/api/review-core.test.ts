// Regressions found by a black-box review of the core API promises (integration-api.md 1-5, 7-9;
// decisions.md 1-6, 8, 9). Each case failed before its fix.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type Client, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

async function fresh(): Promise<{ api: Client; admin: Client }> {
  const team = await t.team();
  return { api: team.api.Integration, admin: team.admin };
}

describe('upsert by email updates the match with only the sent fields', () => {
  it('does not ask an update for the fields a create would need', async () => {
    const { api } = await fresh();
    const c = (await api.post('/constituents', { FirstName: 'Lin', LastName: 'Chen', Email1: 'lin@example.org' })).body.constituent;
    const r = await api.post('/constituents?mode=upsert&matchOn=email', { Email1: 'LIN@example.org', Phone1: '555-123-4567' });
    expect(r.status, r.raw).toBe(200);
    expect(r.body).toMatchObject({ created: false, constituent: { PkConstituent: c.PkConstituent, FirstName: 'Lin', LastName: 'Chen', Phone1: '5551234567' } });
  });

  it('still refuses, and writes nothing, when no one matches and the body cannot create', async () => {
    const { api, admin } = await fresh();
    const before = (await admin.get('/activity')).body.total;
    const r = await api.post('/constituents?mode=upsert&matchOn=email', { Email1: 'nobody@example.org' });
    expect(r.body.error).toMatchObject({ code: 'missing_field', field: 'FirstName' });
    expect(r.status).toBe(400);
    expect((await admin.get('/activity')).body.total).toBe(before);
    expect((await api.get('/constituents?email=nobody@example.org')).body.total).toBe(0);
  });

  it('answers 403 record_protected when the one match is locked', async () => {
    const { api, admin } = await fresh();
    const c = (await api.post('/constituents', { FirstName: 'Ada', Email1: 'ada@example.org' })).body.constituent;
    expect((await admin.post(`/constituents/${c.PkConstituent}/lock`)).status).toBe(200);
    const r = await api.post('/constituents?mode=upsert&matchOn=email', { Email1: 'ada@example.org', Nickname: 'Countess' });
    expect(r.body.error?.code, r.raw).toBe('record_protected');
    expect(r.status).toBe(403);
  });
});

describe('integer path and query parameters are decimal digits within the safe range', () => {
  it('refuses hex, exponent and unsafe ids instead of reading another record', async () => {
    const { api } = await fresh();
    for (let i = 0; i < 16; i++) await api.post('/constituents', { LastName: `N${i}` });
    for (const id of ['0x10', '1e1', '9007199254740993']) {
      const r = await api.get(`/constituents/${id}`);
      expect(r.status, `${id}: ${r.raw}`).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'invalid_field', field: 'id' });
    }
    expect((await api.get('/constituents/10')).status).toBe(200);
  });

  it('names the parameter for a page, page size or filter id out of range', async () => {
    const { api } = await fresh();
    for (const [q, field] of [['page=99999999999999999999', 'page'], ['pageSize=0x10', 'pageSize'], ['page=', 'page']] as const) {
      const r = await api.get(`/constituents?${q}`);
      expect(r.body.error, q).toMatchObject({ code: 'invalid_field', field });
    }
    const v = await api.get('/volunteer-tasks?volunteerId=99999999999999999999999');
    expect(v.body.error).toMatchObject({ code: 'invalid_field', field: 'volunteerId' });
    expect((await api.get('/constituents?page=2&pageSize=100')).status).toBe(200);
  });
});

describe('a volunteer is always an existing constituent (spec 2.2)', () => {
  it('deleting the constituent deletes its volunteer and frees the volunteer\'s tasks', async () => {
    const { api, admin } = await fresh();
    const c = (await api.post('/constituents', { FirstName: 'Vera', LastName: 'Gone', Email1: 'vera@example.org' })).body.constituent;
    const v = (await api.post('/volunteers', { FkConstituent: c.PkConstituent })).body.volunteer;
    const start = new Date(Date.now() + 3 * 86400_000).toISOString().slice(0, 19);
    const task = (await api.post('/volunteer-tasks', { VolunteerTaskTitle: 'Canvass', TaskStartDateTime: start, FkVolunteer: v.PkVolunteer })).body.volunteerTask;
    expect(task.FkVolunteer).toBe(v.PkVolunteer);
    expect((await admin.del(`/constituents/${c.PkConstituent}`)).status).toBe(200);
    const read = await api.get(`/volunteers/${v.PkVolunteer}`);
    expect(read.body.error?.code, read.raw).toBe('not_found');
    expect((await api.get(`/volunteers?search=${v.PkVolunteer}`)).body.total).toBe(0);
    expect((await api.get(`/volunteer-tasks/${task.PkTask}`)).body.volunteerTask).toMatchObject({ FkVolunteer: null, VolunteerName: null, VolunteerEmail: null, VolunteerPhone: null });
    const outbox = (await admin.get('/outbox')).body.notifications.filter((n: { taskId: number }) => n.taskId === task.PkTask);
    expect(outbox.length).toBeGreaterThan(0);
    expect(outbox.every((n: { status: string }) => n.status === 'canceled')).toBe(true);
    const history = (await admin.get(`/history/volunteers/${v.PkVolunteer}`)).body.events.map((e: { type: string }) => e.type);
    expect(history.at(-1)).toBe('VolunteerDeleted');
  });
});

describe('the 24-hour reminder follows the task start (decisions.md 8)', () => {
  const HOUR = 3600_000;
  const at = (h: number) => new Date(Date.now() + h * HOUR).toISOString().slice(0, 19);
  const outbox = async (admin: Client, taskId: number) =>
    (await admin.get('/outbox')).body.notifications.filter((n: { taskId: number }) => n.taskId === taskId);

  it('queues a reminder when an assigned task moves from inside 24 hours to later, and when a start is first set', async () => {
    const { api, admin } = await fresh();
    const c = (await api.post('/constituents', { FirstName: 'Rem', Email1: 'rem@example.org' })).body.constituent;
    const v = (await api.post('/volunteers', { FkConstituent: c.PkConstituent })).body.volunteer;
    const soon = (await api.post('/volunteer-tasks', { VolunteerTaskTitle: 'Soon', TaskStartDateTime: at(3), FkVolunteer: v.PkVolunteer })).body.volunteerTask;
    expect((await outbox(admin, soon.PkTask)).map((n: { kind: string }) => n.kind)).toEqual(['signup_confirmation']);
    const later = at(7 * 24);
    await api.patch(`/volunteer-tasks/${soon.PkTask}`, { TaskStartDateTime: later });
    const reminders = (await outbox(admin, soon.PkTask)).filter((n: { kind: string }) => n.kind === 'task_reminder');
    expect(reminders).toEqual([expect.objectContaining({ volunteerId: v.PkVolunteer, to: 'rem@example.org', status: 'pending', sendAt: new Date(Date.parse(later + 'Z') - 24 * HOUR).toISOString().slice(0, 19) })]);

    const undated = (await api.post('/volunteer-tasks', { VolunteerTaskTitle: 'Undated', FkVolunteer: v.PkVolunteer })).body.volunteerTask;
    await api.patch(`/volunteer-tasks/${undated.PkTask}`, { TaskStartDateTime: later });
    expect((await outbox(admin, undated.PkTask)).filter((n: { kind: string }) => n.kind === 'task_reminder')).toHaveLength(1);
  });

  it('queues one reminder, not two, when a PATCH moves the start and assigns together; none for an open task', async () => {
    const { api, admin } = await fresh();
    const c = (await api.post('/constituents', { FirstName: 'Two', Email1: 'two@example.org' })).body.constituent;
    const v = (await api.post('/volunteers', { FkConstituent: c.PkConstituent })).body.volunteer;
    const k = (await api.post('/volunteer-tasks', { VolunteerTaskTitle: 'Open', TaskStartDateTime: at(3) })).body.volunteerTask;
    await api.patch(`/volunteer-tasks/${k.PkTask}`, { TaskStartDateTime: at(72) });
    expect(await outbox(admin, k.PkTask)).toEqual([]);
    await api.patch(`/volunteer-tasks/${k.PkTask}`, { TaskStartDateTime: at(96), FkVolunteer: v.PkVolunteer });
    expect((await outbox(admin, k.PkTask)).map((n: { kind: string }) => n.kind).sort()).toEqual(['signup_confirmation', 'task_reminder']);
  });
});
