import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => { t = await startTestApp(); });
afterAll(() => t.close());

const donor = async (team: Awaited<ReturnType<TestApp['team']>>) =>
  (await team.api.Integration.post('/constituents', { FirstName: 'Donor' })).body.constituent.PkConstituent as number;

describe('locks (decisions.md §9: "writes to a locked record are 403 record_protected; reads work")', () => {
  it.each([
    ['constituents', async (api: any) => (await api.post('/constituents', { FirstName: 'Locked' })).body.constituent.PkConstituent],
    ['events', async (api: any) => (await api.post('/events', { EventTitle: 'Locked' })).body.event.PkEvent],
    ['volunteer-tasks', async (api: any) => (await api.post('/volunteer-tasks', { VolunteerTaskTitle: 'Locked' })).body.volunteerTask.PkTask],
  ])('refuses the admin DELETE of a locked %s record and keeps it', async (resource, make) => {
    const team = await t.team();
    const id = await make(team.api.Integration);
    expect((await team.admin.post(`/${resource}/${id}/lock`)).status).toBe(200);
    const del = await team.admin.del(`/${resource}/${id}`);
    expect([del.status, del.body.error?.code]).toEqual([403, 'record_protected']);
    expect((await team.api.Integration.get(`/${resource}/${id}`)).status).toBe(200);
    // Unlocked, it goes.
    expect((await team.admin.post(`/${resource}/${id}/unlock`)).status).toBe(200);
    expect((await team.admin.del(`/${resource}/${id}`)).status).toBe(200);
    expect((await team.api.Integration.get(`/${resource}/${id}`)).status).toBe(404);
  });

  it("deletes a locked volunteer with its constituent: the constituent's delete is the write, the volunteer's a consequence (spec 2.2)", async () => {
    const team = await t.team();
    const api = team.api.Integration;
    const c = (await api.post('/constituents', { FirstName: 'Vol' })).body.constituent.PkConstituent;
    const v = (await api.post('/volunteers', { FkConstituent: c })).body.volunteer.PkVolunteer;
    expect((await team.admin.post(`/volunteers/${v}/lock`)).status).toBe(200);
    expect((await team.admin.del(`/volunteers/${v}`)).status).toBe(403);
    expect((await team.admin.del(`/constituents/${c}`)).status).toBe(200);
    expect((await api.get(`/volunteers/${v}`)).status).toBe(404);
  });

  it('refuses a refund recorded on a locked donation, as it refuses its receipt', async () => {
    const team = await t.team();
    const d = (await team.admin.post('/donations', { FkConstituent: await donor(team), Amount: 100 })).body.donation.PkDonation;
    expect((await team.admin.post(`/donations/${d}/lock`)).status).toBe(200); // the code offers the lock
    expect((await team.admin.post(`/donations/${d}/receipt`)).status).toBe(403);
    const refund = await team.admin.post(`/donations/${d}/refund`, { Amount: 40 });
    expect([refund.status, refund.body.error?.code]).toEqual([403, 'record_protected']);
    expect((await team.admin.del(`/donations/${d}`)).status).toBe(403);
    expect((await team.admin.post(`/donations/${d}/unlock`)).status).toBe(200);
    expect((await team.admin.patch(`/donations/${d}`, {})).body.donation).toMatchObject({ Amount: 100, IsReceipted: false, RefundAmount: null });
    expect((await team.admin.post(`/donations/${d}/refund`, { Amount: 40 })).status).toBe(201);
  });
});

describe('unknown body fields (decisions.md §3: "Sending a read-only or unknown field in a body is 400 unknown_field naming it")', () => {
  it.each([
    ['POST', (d: number) => `/donations/${d}/receipt`],
    ['POST', (d: number) => `/donations/${d}/thank`],
    ['DELETE', (d: number) => `/donations/${d}`],
  ])('refuses %s %s with a stray field and writes nothing', async (method, path) => {
    const team = await t.team();
    const d = (await team.admin.post('/donations', { FkConstituent: await donor(team), Amount: 100 })).body.donation.PkDonation;
    const url = path(d);
    const r = method === 'POST' ? await team.admin.post(url, { Bogus: 1 }) : await team.admin.del(url, { Bogus: 1 });
    expect([r.status, r.body.error?.code, r.body.error?.field]).toEqual([400, 'unknown_field', 'Bogus']);
    // Nothing written.
    expect((await team.admin.patch(`/donations/${d}`, {})).body.donation).toMatchObject({ IsReceipted: false, IsThanked: false });
  });

  it('refuses DELETE /recurring-gifts/:id with a stray field and leaves the gift running', async () => {
    const team = await t.team();
    const g = (await team.admin.post('/recurring-gifts', { FkConstituent: await donor(team), Amount: 5, Frequency: 'monthly', StartDate: '2030-01-01' })).body.recurringGift.PkRecurringGift;
    const r = await team.admin.del(`/recurring-gifts/${g}`, { Bogus: 1 });
    expect([r.status, r.body.error?.code, r.body.error?.field]).toEqual([400, 'unknown_field', 'Bogus']);
    expect((await team.admin.del(`/recurring-gifts/${g}`)).status).toBe(200);
  });
});

describe('readiness when the followers cannot tell their state (decisions.md §1: ready only once every follower has caught up)', () => {
  it('is not ready when asking the followers fails', async () => {
    const { readiness } = await import('../../api/routes/health.js');
    const failing = { reachable: async () => {}, followers: async () => Promise.reject(new Error('the read models thread did not answer')), starting: () => false };
    expect(await readiness(failing)).toEqual({ code: 503, body: { status: 'not_ready', followers: [] } });
  });
});
