import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const key = (k: string) => ({ headers: { 'idempotency-key': k } });

describe('admin creates of the four records (decisions.md §9)', () => {
  it('answers as the public create does, with the ETag, and the record reads the same through a key', async () => {
    const team = await t.team();
    const c = await team.admin.post('/constituents', { FirstName: 'Ada', LastName: 'Lovelace', MailingZipCode: '02134' });
    expect(c.status).toBe(201);
    expect(c.headers.etag).toBe('"1"');
    expect(c.body).toMatchObject({ created: true, constituent: { ConstituentName: 'Ada Lovelace', MailingZipCode: '02134', FkTeam: team.id } });
    const id = c.body.constituent.PkConstituent;
    expect((await team.api.Integration.get(`/constituents/${id}`)).body.constituent).toEqual(c.body.constituent);

    const v = await team.admin.post('/volunteers', { FkConstituent: id });
    expect(v.status).toBe(201);
    expect(v.body).toMatchObject({ created: true, volunteer: { FkConstituent: id } });
    const again = await team.admin.post('/volunteers', { FkConstituent: id });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ created: false, volunteer: { PkVolunteer: v.body.volunteer.PkVolunteer } });

    const task = await team.admin.post('/volunteer-tasks', { VolunteerTaskTitle: 'Phone bank' });
    expect(task.status).toBe(201);
    expect(task.body).toMatchObject({ created: true, volunteerTask: { VolunteerTaskTitle: 'Phone bank' } });

    const event = await team.admin.post('/events', { EventTitle: 'Town hall', StartTime: '6 PM' });
    expect(event.status).toBe(201);
    expect(event.body).toMatchObject({ created: true, event: { EventTitle: 'Town hall', StartTime: '18:00' } });
  });

  it('upserts a constituent by email as the public create does', async () => {
    const team = await t.team();
    await team.admin.post('/constituents', { LastName: 'Ito', Email1: 'ito@example.org' });
    const r = await team.admin.post('/constituents?mode=upsert&matchOn=email', { Email1: 'ITO@example.org', FirstName: 'Ken' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ created: false, constituent: { ConstituentName: 'Ken Ito' } });
  });

  it('refuses bad bodies in the spec shape, naming the field, and writes nothing', async () => {
    const team = await t.team();
    expect((await team.admin.post('/constituents', { LastName: 'X', PkConstituent: 4 })).body.error).toMatchObject({ code: 'unknown_field', field: 'PkConstituent' });
    expect((await team.admin.post('/constituents', { LastName: 'X', Phone1: '12' })).body.error).toMatchObject({ code: 'invalid_field', field: 'Phone1' });
    expect((await team.admin.post('/volunteers', {})).body.error).toMatchObject({ code: 'missing_field', field: 'FkConstituent' });
    expect((await team.admin.post('/events', { EventTitle: 5 })).body.error).toMatchObject({ code: 'invalid_field', field: 'EventTitle' });
    expect((await team.api.Integration.get('/constituents')).body.total).toBe(0);
  });

  it('is 404 for an unknown team and 401 without the admin token', async () => {
    expect((await t.admin.post('/teams/999999/constituents', { LastName: 'X' })).status).toBe(404);
    const r = await t.app.inject({ method: 'POST', url: '/admin/v1/teams/1/constituents', payload: { LastName: 'X' } });
    expect(r.statusCode).toBe(401);
  });

  it('labels the changes Application, with no key name, in the activity log', async () => {
    const team = await t.team();
    const c = (await team.admin.post('/constituents', { LastName: 'Admin' })).body.constituent;
    const entries = (await team.admin.get('/activity')).body.activity.filter((a: { recordType: string }) => a.recordType === 'constituent');
    expect(entries).toEqual([{ at: expect.any(String), source: 'Application', keyName: null, action: 'created', recordType: 'constituent', recordId: c.PkConstituent }]);
  });
});

describe('Idempotency-Key on the admin creates, scoped to the team (decisions.md §9, §11)', () => {
  it('replays a repeat with the same key and body, writing nothing', async () => {
    const team = await t.team();
    const first = await team.admin.post('/constituents', { LastName: 'Once' }, key('import:abc:1'));
    const again = await team.admin.post('/constituents', { LastName: 'Once' }, key('import:abc:1'));
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.raw).toBe(first.raw);
    expect((await team.api.Integration.get('/constituents')).body.total).toBe(1);
  });

  it('is 422 idempotency_key_reused for another body, and 400 for a malformed key', async () => {
    const team = await t.team();
    await team.admin.post('/events', { EventTitle: 'A' }, key('k'));
    expect((await team.admin.post('/events', { EventTitle: 'B' }, key('k'))).body.error.code).toBe('idempotency_key_reused');
    expect((await team.admin.post('/events', { EventTitle: 'B' }, key('é'))).body.error).toMatchObject({ code: 'invalid_field', field: 'Idempotency-Key' });
  });

  it("keeps one team's keys apart from another's, and from an API key's", async () => {
    const a = await t.team();
    const b = await t.team();
    expect((await a.admin.post('/constituents', { LastName: 'A' }, key('same'))).status).toBe(201);
    const other = await b.admin.post('/constituents', { LastName: 'A' }, key('same'));
    expect(other.status).toBe(201);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    const viaKey = await a.api.Integration.post('/constituents', { LastName: 'A' }, key('same'));
    expect(viaKey.headers['idempotent-replayed']).toBeUndefined();
    expect((await a.api.Integration.get('/constituents')).body.total).toBe(2);
  });
});

describe('activity filters (decisions.md §9)', () => {
  it('keeps only one key name, or one source, and pages what is left', async () => {
    const team = await t.team([
      ['Mailchimp', 'read_write'],
      ['Zapier', 'read_write'],
    ]);
    await team.api.Mailchimp.post('/constituents', { LastName: 'M1' });
    await team.api.Zapier.post('/constituents', { LastName: 'Z1' });
    await team.api.Mailchimp.post('/constituents', { LastName: 'M2' });
    await team.admin.post('/constituents', { LastName: 'A1' });
    const names = async (query: string) => {
      const r = await team.admin.get(`/activity?${query}`);
      expect(r.status).toBe(200);
      return { total: r.body.total, rows: r.body.activity.map((a: { source: string; keyName: string | null }) => `${a.source}/${a.keyName}`) };
    };
    expect(await names('keyName=Mailchimp')).toEqual({ total: 2, rows: ['Public API/Mailchimp', 'Public API/Mailchimp'] });
    expect(await names('source=Public%20API&pageSize=1')).toEqual({ total: 3, rows: ['Public API/Mailchimp'] });
    const app = await names('source=Application');
    expect(app.rows.every((r: string) => r === 'Application/null')).toBe(true);
    expect(app.rows.length).toBeGreaterThan(0);
    expect(await names('keyName=Nobody')).toEqual({ total: 0, rows: [] });
  });

  it('refuses an unknown source or parameter, naming it', async () => {
    const team = await t.team();
    expect((await team.admin.get('/activity?source=Console')).body.error).toMatchObject({ code: 'invalid_field', field: 'source' });
    expect((await team.admin.get('/activity?key=x')).body.error).toMatchObject({ code: 'unknown_field', field: 'key' });
  });
});
