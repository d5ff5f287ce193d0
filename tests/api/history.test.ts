import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { taskTeam } from './volunteer-support.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('a record\u2019s history', () => {
  it('has one entry per write with the fields it changed, ends with the deletion and stays readable', async () => {
    const team = await taskTeam(t);
    const c = (await team.api.post('/constituents', { FirstName: 'Ada', LastName: 'Byron' })).body.constituent;
    await team.api.patch(`/constituents/${c.PkConstituent}`, { Nickname: 'Countess' });
    await team.api.patch(`/constituents/${c.PkConstituent}`, { Nickname: 'Countess' }); // changes nothing: no write
    await team.api.patch(`/constituents/${c.PkConstituent}`, { LastName: 'Lovelace' });
    expect((await team.admin.del(`/constituents/${c.PkConstituent}`)).status).toBe(200);
    const h = await team.api.get(`/constituents/${c.PkConstituent}/history`);
    expect(h.status, h.raw).toBe(200);
    expect(h.body).toMatchObject({ page: 1, pageSize: 25, total: 4 });
    expect(h.body.history.map((e: any) => [e.revision, e.type])).toEqual([
      [1, 'constituent.created'],
      [2, 'constituent.updated'],
      [3, 'constituent.updated'],
      [4, 'constituent.deleted'],
    ]);
    const [created, nick, renamed, deleted] = h.body.history;
    expect(created).toMatchObject({ source: 'Public API', keyName: 'Integration' });
    expect(created.changes.FirstName).toEqual({ from: null, to: 'Ada' });
    expect(created.changes.Nickname).toBeUndefined();
    expect(nick.changes).toEqual({ Nickname: { from: null, to: 'Countess' } });
    expect(renamed.changes).toEqual({ LastName: { from: 'Byron', to: 'Lovelace' }, ConstituentName: { from: 'Ada Byron', to: 'Ada Lovelace' } });
    expect(deleted).toMatchObject({ source: 'Application', keyName: null, changes: {} });
    const page2 = await team.api.get(`/constituents/${c.PkConstituent}/history?page=2&pageSize=3`);
    expect(page2.body).toMatchObject({ page: 2, pageSize: 3, total: 4 });
    expect(page2.body.history).toEqual([deleted]);
    const stranger = await t.team();
    expect((await stranger.api.Integration.get(`/constituents/${c.PkConstituent}/history`)).status).toBe(404);
    expect((await team.api.get('/constituents/999999/history')).status).toBe(404);
  });

  it('keeps an erased constituent\u2019s entries in their shape: each lists the fields its write changed, personal ones null (decisions.md §17)', async () => {
    const team = await taskTeam(t);
    const c = (await team.api.post('/constituents', { FirstName: 'Grace', LastName: 'Hopper', Email1: 'g@example.org' })).body.constituent;
    await team.api.patch(`/constituents/${c.PkConstituent}`, { Email1: 'grace@example.org' });
    await team.api.patch(`/constituents/${c.PkConstituent}`, { Nickname: 'Amazing' });
    const before = (await team.api.get(`/constituents/${c.PkConstituent}/history`)).body.history;
    expect((await team.admin.post(`/constituents/${c.PkConstituent}/erase`, {})).status).toBe(200);
    const after = (await team.api.get(`/constituents/${c.PkConstituent}/history`)).body.history;
    expect(after).toHaveLength(before.length + 1);
    for (const [i, entry] of before.entries()) {
      expect(Object.keys(after[i].changes), `revision ${i + 1}`).toEqual(Object.keys(entry.changes));
      expect(after[i]).toMatchObject({ revision: entry.revision, type: entry.type, erased: true });
    }
    expect(after[1].changes).toEqual({ Email1: { from: null, to: null } });
    expect(after[0].changes.FirstName).toEqual({ from: null, to: null });
    expect(after[0].changes.FkConstituentType).toEqual(before[0].changes.FkConstituentType);
    expect(JSON.stringify(after)).not.toMatch(/Grace|Hopper|g@example|Amazing/);
  });

  it('names a task\u2019s person-events by their own type, with FkVolunteer', async () => {
    const team = await taskTeam(t);
    const v = await team.volunteer('Grace');
    const task = await team.task();
    await team.api.patch(`/volunteer-tasks/${task.PkTask}`, { FkVolunteer: v.id });
    await team.api.patch(`/volunteer-tasks/${task.PkTask}`, { FkVolunteer: null });
    const h = await team.api.get(`/volunteer-tasks/${task.PkTask}/history`);
    expect(h.body.history.map((e: any) => e.type)).toEqual(['volunteer_task.created', 'volunteer_task.signed_up', 'volunteer_task.unassigned']);
    expect(h.body.history[1].changes.FkVolunteer).toEqual({ from: null, to: v.id });
    expect(h.body.history[2].changes.FkVolunteer).toEqual({ from: v.id, to: null });
  });

  it('holds writes that fire no webhook (an event\u2019s Theme)', async () => {
    const team = await taskTeam(t);
    const e = (await team.api.post('/events', { EventTitle: 'Rally', StartDate: '2030-05-01' })).body.event;
    await team.api.patch(`/events/${e.PkEvent}`, { Theme: 'Spring' });
    const h = await team.api.get(`/events/${e.PkEvent}/history`);
    expect(h.body.history.map((x: any) => x.type)).toEqual(['event.created', 'event.updated']);
    expect(h.body.history[1].changes).toEqual({ Theme: { from: null, to: 'Spring' } });
  });
});

describe('reading a record as it stood', () => {
  it('folds the stream up to a revision or an instant', async () => {
    const team = await taskTeam(t);
    const c = (await team.api.post('/constituents', { FirstName: 'Ada', LastName: 'Byron' })).body.constituent;
    // Instants are kept to the millisecond: let the clock pass one so the two writes stand apart
    // (a CI run wrote both in the same millisecond, and asOf that instant rightly held both).
    await new Promise((resolve) => setTimeout(resolve, 5));
    await team.api.patch(`/constituents/${c.PkConstituent}`, { LastName: 'Lovelace' });
    const h = (await team.api.get(`/constituents/${c.PkConstituent}/history`)).body.history;
    expect(h[1].at > h[0].at, `${h[0].at} then ${h[1].at}`).toBe(true);
    const r1 = await team.api.get(`/constituents/${c.PkConstituent}?revision=1`);
    expect(r1.status, r1.raw).toBe(200);
    expect(r1.body).toEqual({ constituent: c, revision: 1 });
    const at1 = await team.api.get(`/constituents/${c.PkConstituent}?asOf=${h[0].at}`);
    expect(at1.body.revision).toBe(1);
    expect(at1.body.constituent.LastName).toBe('Byron');
    // The second write's own instant, in every form of date-time the API takes (a space or a
    // lower-case t between date and time too), keeps its fraction of a second: that write's revision.
    for (const asOf of [h[1].at, h[1].at.replace('T', ' '), h[1].at.replace('T', 't')]) {
      const r = await team.api.get(`/constituents/${c.PkConstituent}?asOf=${encodeURIComponent(asOf)}`);
      expect([asOf, r.status, r.body.revision]).toEqual([asOf, 200, 2]);
    }
    const now = await team.api.get(`/constituents/${c.PkConstituent}`);
    expect((await team.api.get(`/constituents/${c.PkConstituent}?asOf=2999-01-01T00:00:00Z`)).body).toEqual({ ...now.body, revision: 2 });
    expect((await team.api.get(`/constituents/${c.PkConstituent}?asOf=2000-01-01T00:00:00Z`)).status).toBe(404);
    const past = await team.api.get(`/constituents/${c.PkConstituent}?revision=3`);
    expect([past.status, past.body.error]).toEqual([404, { code: 'not_found', message: `The constituent ${c.PkConstituent} has no revision 3; its latest is 2.` }]);
    await team.admin.del(`/constituents/${c.PkConstituent}`);
    expect((await team.api.get(`/constituents/${c.PkConstituent}?asOf=2999-01-01T00:00:00Z`)).status).toBe(404);
    expect((await team.api.get(`/constituents/${c.PkConstituent}?revision=2`)).body.constituent).toEqual(now.body.constituent);
    const stranger = await t.team();
    expect((await stranger.api.Integration.get(`/constituents/${c.PkConstituent}?revision=1`)).status).toBe(404);
  });

  it('shapes every resource exactly as its read model does', async () => {
    const team = await taskTeam(t);
    await team.admin.post('/lookups/districts', { name: 'North' });
    const v = await team.volunteer('Mary');
    const group = await team.admin.post('/volunteer-task-groups', { TaskGroupTitle: 'Doors' });
    const task = await team.task({ FkTaskGroup: group.body.volunteerTaskGroup.PkTaskGroup, TaskStartDateTime: '2030-01-01T10:00:00', TaskEndDateTime: '2030-01-01T12:30:00' });
    await team.api.patch(`/volunteer-tasks/${task.PkTask}`, { FkVolunteer: v.id });
    const e = (await team.api.post('/events', { EventTitle: 'Rally', StartDate: '2030-05-01' })).body.event;
    for (const [path, key, id] of [
      ['constituents', 'constituent', v.constituent],
      ['volunteers', 'volunteer', v.id],
      ['volunteer-tasks', 'volunteerTask', task.PkTask],
      ['events', 'event', e.PkEvent],
    ] as const) {
      const now = await team.api.get(`/${path}/${id}`);
      const total = (await team.api.get(`/${path}/${id}/history`)).body.total;
      const asOf = await team.api.get(`/${path}/${id}?revision=${total}`);
      expect(asOf.status, asOf.raw).toBe(200);
      expect(asOf.body, path).toEqual({ [key]: now.body[key], revision: total });
    }
  });

  it.each([
    ['asOf=2026-01-01T00:00:00Z&revision=1', 'revision'],
    ['asOf=yesterday', 'asOf'],
    ['asOf=2026-02-30T00:00:00Z', 'asOf'],
    ['revision=0', 'revision'],
    ['revision=x', 'revision'],
  ])('refuses %s as invalid_field naming %s', async (query, field) => {
    const team = await taskTeam(t);
    const c = (await team.api.post('/constituents', { FirstName: 'Q', LastName: 'R' })).body.constituent;
    const r = await team.api.get(`/constituents/${c.PkConstituent}?${query}`);
    expect(r.status, r.raw).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'invalid_field', field });
  });
});
