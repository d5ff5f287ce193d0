import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERSONAL_FIELDS } from '../../domain/constituent/rules.js';
import { startTestApp, type TestApp } from '../support/app.js';

/**
 * decisions.md §17: what an erasure answers and how the record, its history, as-of reads, the
 * change feed, the export and linked records read afterwards (the bytes on disk: erasure.bytes.test.ts).
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const PERSON = {
  FirstName: 'Grace',
  LastName: 'Hopper',
  Nickname: 'Amazing',
  Email1: 'grace@example.org',
  Phone1: '6175550100',
  MailingAddressLine1: '1 Navy Way',
  MailingCity: 'Arlington',
  MailingState: 'VA',
  DateOfBirth: '1906-12-09',
};

async function erasedSetUp() {
  const team = await t.team();
  const api = team.api.Integration;
  const id = (await api.post('/constituents', PERSON)).body.constituent.PkConstituent as number;
  expect((await api.patch(`/constituents/${id}`, { Email1: 'admiral@example.org', IsEmailOk: true })).status).toBe(200);
  // Personal fields alone: once erased, this update changes nothing visible, yet keeps its envelope.
  expect((await api.patch(`/constituents/${id}`, { Nickname: 'Amazing Grace' })).status).toBe(200);
  const control = (await api.post('/constituents', { FirstName: 'Alan', LastName: 'Turing', Email1: 'alan@example.org' })).body.constituent.PkConstituent as number;
  const volunteer = (await api.post('/volunteers', { FkConstituent: id, IsStudent: true })).body.volunteer.PkVolunteer as number;
  const task = (await api.post('/volunteer-tasks', { VolunteerTaskTitle: 'Debugging', FkVolunteer: volunteer })).body.volunteerTask.PkTask as number;
  const before = {
    history: (await api.get(`/constituents/${id}/history`)).body.history,
    changes: (await api.get('/changes?limit=1000')).body.changes,
    volunteerHistory: (await api.get(`/volunteers/${volunteer}/history`)).body.history,
  };
  const erased = await team.admin.post(`/constituents/${id}/erase`, { reason: 'Asked to be forgotten' });
  return { team, api, id, control, volunteer, task, before, erased };
}

describe('erasing a constituent (decisions.md §17)', () => {
  it('answers 200 with the id and time, the same again, 404 for an unknown id, and only with the admin token', async () => {
    const { team, id, erased } = await erasedSetUp();
    expect(erased.status).toBe(200);
    expect(erased.body).toEqual({ erased: { PkConstituent: id, erasedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) } });
    const again = await team.admin.post(`/constituents/${id}/erase`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(erased.body);
    expect((await team.admin.post('/constituents/999999/erase', {})).status).toBe(404);
    const other = await t.team();
    expect((await other.admin.post(`/constituents/${id}/erase`, {})).status).toBe(404);
    const byKey = await t.app.inject({ method: 'POST', url: `/admin/v1/teams/${team.id}/constituents/${id}/erase`, headers: { authorization: `Bearer ${team.keys.Integration.key}` } });
    expect(byKey.statusCode).toBe(401);
    const long = await team.admin.post(`/constituents/${id}/erase`, { reason: 'x'.repeat(201) });
    expect(long.status).toBe(400);
    expect(long.body.error).toMatchObject({ code: 'invalid_field', field: 'reason' });
    expect((await team.admin.post(`/constituents/${id}/erase`, { why: 'no' })).body.error).toMatchObject({ code: 'unknown_field', field: 'why' });
  });

  it('replays an Idempotency-Key answer and refuses the key for another body', async () => {
    const team = await t.team();
    const id = (await team.api.Integration.post('/constituents', PERSON)).body.constituent.PkConstituent;
    const headers = { 'idempotency-key': 'erase-1' };
    const first = await team.admin.post(`/constituents/${id}/erase`, { reason: 'asked' }, { headers });
    expect(first.status).toBe(200);
    const replay = await team.admin.post(`/constituents/${id}/erase`, { reason: 'asked' }, { headers });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect((await team.admin.post(`/constituents/${id}/erase`, { reason: 'other' }, { headers })).status).toBe(422);
  });

  it('reads 404 like a deleted record; the control record is untouched; a write to it is 404', async () => {
    const { api, id, control } = await erasedSetUp();
    expect((await api.get(`/constituents/${id}`)).status).toBe(404);
    expect((await api.patch(`/constituents/${id}`, { FirstName: 'X' })).status).toBe(404);
    expect((await api.get(`/constituents?search=Hopper`)).body.total).toBe(0);
    expect((await api.get(`/constituents?search=grace`)).body.total).toBe(0);
    expect((await api.get(`/constituents/${control}`)).body.constituent).toMatchObject({ FirstName: 'Alan', Email1: 'alan@example.org' });
  });

  it('keeps the history: every revision, personal fields null, erased: true on each entry, ending with the erasure', async () => {
    const { team, api, id, before } = await erasedSetUp();
    const after = (await api.get(`/constituents/${id}/history`)).body.history;
    expect(after.map((e: any) => e.revision)).toEqual([...before.history.map((e: any) => e.revision), before.history.length + 1]);
    expect(after.at(-1)).toMatchObject({ type: 'constituent.erased', erased: true });
    for (const entry of after) {
      expect(entry.erased).toBe(true);
      for (const f of PERSONAL_FIELDS) if (entry.changes[f]) expect(entry.changes[f]).toEqual({ from: null, to: null });
    }
    // The update's other field stays.
    expect(after[1].changes.IsEmailOk).toEqual({ from: null, to: true });
    const old = await api.get(`/constituents/${id}?revision=1`);
    expect(old.status).toBe(200);
    expect(old.body.erased).toBe(true);
    for (const f of PERSONAL_FIELDS) expect(old.body.constituent[f]).toBeNull();
    expect(old.body.constituent.PkConstituent).toBe(id);
    const asOf = await api.get(`/constituents/${id}?asOf=${encodeURIComponent(after[1].at)}`);
    expect(asOf.body).toMatchObject({ revision: 2, erased: true, constituent: { Email1: null, IsEmailOk: true } });
    // The admin history too: every entry says so (decisions.md §7 names the admin and public history).
    const admin = await team.admin.get(`/history/constituents/${id}`);
    expect(admin.status, admin.raw).toBe(200);
    expect(admin.body.events.length).toBeGreaterThan(1);
    for (const e of admin.body.events) expect(e.erased, JSON.stringify(e)).toBe(true);
  });

  it('keeps the feed and export: the same envelope ids and versions, personal fields null, erased: true; a constituent.erased envelope last', async () => {
    const { team, api, id, volunteer, before } = await erasedSetUp();
    const after = (await api.get('/changes?limit=1000')).body.changes;
    const mine = (cs: any[]) => cs.filter((c) => c.data.PkConstituent === id || c.data.PkConstituent === String(id));
    expect(mine(after).slice(0, -1).map((c: any) => [c.id, c.version])).toEqual(mine(before.changes).map((c: any) => [c.id, c.version]));
    for (const c of mine(after).filter((c: any) => c.type.startsWith('constituent.'))) {
      expect(c.erased).toBe(true);
      for (const f of PERSONAL_FIELDS) if (f in c.data) expect(c.data[f]).toBeNull();
    }
    const last = after.at(-1);
    expect(last).toMatchObject({ type: 'constituent.erased', team: team.id, erased: true, data: { PkConstituent: id, FkTeam: team.id } });
    expect(Object.keys(last.data).sort()).toEqual(['ErasedUtc', 'FkTeam', 'PkConstituent']);
    // Linked records' envelopes keep their own fields, with the person's copies null.
    const v = after.find((c: any) => c.type === 'volunteer.created' && c.data.PkVolunteer === volunteer);
    expect(v.data).toMatchObject({ FkConstituent: id, IsStudent: true, ConstituentName: null, Email1: null, Phone1: null });
    expect(v.erased).toBeUndefined();
    const signedUp = after.find((c: any) => c.type === 'volunteer_task.signed_up');
    expect(signedUp.data.constituent).toMatchObject({ FirstName: null, LastName: null, Email1: null, Phone1: null });
    const exported = await team.admin.get('/export');
    expect(exported.status).toBe(200);
    const lines = exported.raw.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.id)).toEqual(after.map((c: any) => c.id));
    expect(exported.raw).not.toContain('Hopper');
    expect(exported.raw).not.toContain('grace@example.org');
  });

  it('clears linked records\u2019 copies of the name, e-mail and phone, keeping their own fields; activity records the erasure', async () => {
    const { team, api, id, volunteer, task, before } = await erasedSetUp();
    const v = (await api.get(`/volunteers/${volunteer}`)).body.volunteer;
    expect(v).toMatchObject({ FkConstituent: id, IsStudent: true, ConstituentName: null, Email1: null, Phone1: null });
    const k = (await api.get(`/volunteer-tasks/${task}`)).body.volunteerTask;
    expect(k).toMatchObject({ VolunteerTaskTitle: 'Debugging', FkVolunteer: volunteer, VolunteerName: null, VolunteerEmail: null, VolunteerPhone: null });
    const vh = (await api.get(`/volunteers/${volunteer}/history`)).body.history;
    expect(vh.length).toBe(before.volunteerHistory.length);
    const activity = await team.admin.get('/activity');
    expect(activity.body.activity[0]).toMatchObject({ action: 'erased', recordType: 'constituent', recordId: id, source: 'Application' });
    expect(JSON.stringify(activity.body)).not.toContain('Asked to be forgotten');
  });

  it('lists constituent.erased in the catalog with the JSON Schema of its data', async () => {
    const team = await t.team();
    const types = (await team.api.Integration.get('/webhook-event-types')).body.eventTypes;
    const erased = types.find((x: any) => x.name === 'constituent.erased');
    expect(erased.schema).toMatchObject({ type: 'object', required: ['PkConstituent', 'FkTeam', 'ErasedUtc'], additionalProperties: false });
  });
});
