import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { taskTeam } from './volunteer-support.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** A call with headers of our own, through inject. */
async function call(method: 'GET' | 'PATCH' | 'DELETE', url: string, token: string, headers: Record<string, string>, body?: unknown) {
  const r = await t.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}`, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.statusCode, headers: r.headers, raw: r.body, body: r.body ? JSON.parse(r.body) : null };
}

async function constituentTeam() {
  const team = await t.team();
  const token = team.keys.Integration.key as string;
  const created = await team.api.Integration.post('/constituents', { LastName: 'Tag' });
  const id = created.body.constituent.PkConstituent as number;
  const url = `/api/v1/constituents/${id}`;
  return { team, token, created, id, url };
}

describe('ETags of records (decisions.md §11: the revision of §7)', () => {
  it('carries the revision on creates, single reads and updates, one per write', async () => {
    const { team, token, created, url } = await constituentTeam();
    expect(created.headers.etag).toBe('"1"');
    expect((await call('GET', url, token, {})).headers.etag).toBe('"1"');
    const patched = await call('PATCH', url, token, {}, { FirstName: 'Ann' });
    expect(patched.headers.etag).toBe('"2"');
    const unchanged = await call('PATCH', url, token, {}, { FirstName: 'Ann' });
    expect(unchanged.headers.etag).toBe('"2"');
    expect((await team.api.Integration.get(url.replace('/api/v1', ''))).headers.etag).toBe('"2"');
  });

  it('answers a single read 304 with no body when If-None-Match names the current ETag', async () => {
    const { token, url } = await constituentTeam();
    for (const tag of ['"1"', 'W/"1"', '"7", "1"', '*']) {
      const r = await call('GET', url, token, { 'if-none-match': tag });
      expect(r.status, tag).toBe(304);
      expect(r.raw).toBe('');
      expect(r.headers.etag).toBe('"1"');
    }
    const stale = await call('GET', url, token, { 'if-none-match': '"0"' });
    expect(stale.status).toBe(200);
    expect(stale.body.constituent.LastName).toBe('Tag');
  });

  it('is still 404 for a missing record, whatever If-None-Match says', async () => {
    const { token } = await constituentTeam();
    expect((await call('GET', '/api/v1/constituents/999999', token, { 'if-none-match': '*' })).status).toBe(404);
  });

  it('writes a PATCH whose If-Match names the current revision, and refuses another with 412, writing nothing', async () => {
    const { team, token, url, id } = await constituentTeam();
    const stale = await call('PATCH', url, token, { 'if-match': '"0"' }, { FirstName: 'Stale' });
    expect(stale.status).toBe(412);
    expect(stale.body).toEqual({ error: { code: 'precondition_failed', message: expect.stringContaining('"1"') } });
    const weak = await call('PATCH', url, token, { 'if-match': 'W/"1"' }, { FirstName: 'Weak' });
    expect(weak.status).toBe(412); // If-Match compares strongly
    expect((await team.admin.get(`/history/constituents/${id}`)).body.events).toHaveLength(1);
    const ok = await call('PATCH', url, token, { 'if-match': '"1"' }, { FirstName: 'Fresh' });
    expect(ok.status).toBe(200);
    expect(ok.headers.etag).toBe('"2"');
    expect((await call('PATCH', url, token, { 'if-match': '*' }, { FirstName: 'Any' })).status).toBe(200);
  });

  it('refuses a malformed If-Match or If-None-Match with 400 invalid_field naming it', async () => {
    const { token, url } = await constituentTeam();
    const m = await call('PATCH', url, token, { 'if-match': '1' }, { FirstName: 'X' });
    expect(m.status).toBe(400);
    expect(m.body.error).toMatchObject({ code: 'invalid_field', field: 'If-Match' });
    const n = await call('GET', url, token, { 'if-none-match': 'abc' });
    expect(n.body.error).toMatchObject({ code: 'invalid_field', field: 'If-None-Match' });
  });

  it('lets exactly one of racing PATCHes with the same If-Match write', async () => {
    const { token, url } = await constituentTeam();
    const all = await Promise.all(Array.from({ length: 8 }, (_, i) => call('PATCH', url, token, { 'if-match': '"1"' }, { FirstName: `R${i}` })));
    expect(all.map((r) => r.status).sort()).toEqual([200, 412, 412, 412, 412, 412, 412, 412]);
    expect((await call('GET', url, token, {})).headers.etag).toBe('"2"');
  });

  it('guards a task assignment, which is one revision however many events it stores', async () => {
    const { api, keys, volunteer, task } = await taskTeam(t);
    const token = keys.Integration.key as string;
    const v = await volunteer('Ann');
    const k = await task();
    const url = `/api/v1/volunteer-tasks/${k.PkTask}`;
    expect((await call('PATCH', url, token, { 'if-match': '"2"' }, { FkVolunteer: v.id })).status).toBe(412);
    expect((await api.get(`/volunteer-tasks/${k.PkTask}`)).body.volunteerTask.FkVolunteer).toBeNull();
    const ok = await call('PATCH', url, token, { 'if-match': '"1"' }, { FkVolunteer: v.id });
    expect(ok.status).toBe(200);
    expect(ok.headers.etag).toBe('"2"');
  });

  it('is not kept by an Idempotency-Key: a retry of a 412 runs again', async () => {
    const { token, url } = await constituentTeam();
    const headers = { 'if-match': '"5"', 'idempotency-key': 'etag-412' };
    expect((await call('PATCH', url, token, headers, { FirstName: 'X' })).status).toBe(412);
    const again = await call('PATCH', url, token, headers, { FirstName: 'X' });
    expect(again.status).toBe(412);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
  });
});

describe('If-Match on an admin DELETE', () => {
  it('deletes only at the named revision', async () => {
    const { team, id, url, token } = await constituentTeam();
    const admin = `/admin/v1/teams/${team.id}/constituents/${id}`;
    const stale = await call('DELETE', admin, 'test-admin-token', { 'if-match': '"3"' });
    expect(stale.status).toBe(412);
    expect((await call('GET', url, token, {})).status).toBe(200);
    const ok = await call('DELETE', admin, 'test-admin-token', { 'if-match': '"1"' });
    expect(ok.status).toBe(200);
    expect(ok.headers.etag).toBe('"2"');
    expect((await call('GET', url, token, {})).status).toBe(404);
  });
});

describe('the ETag of a single read: the revision its body was projected from, read with it', () => {
  it('names the revision whose as-of read is the body shown, after several writes and a lock', async () => {
    const { team, token, url, id } = await constituentTeam();
    for (const name of ['B', 'C', 'D']) expect((await call('PATCH', url, token, {}, { FirstName: name })).status).toBe(200);
    expect((await team.admin.post(`/constituents/${id}/lock`)).status).toBe(200);
    const now = await call('GET', url, token, {});
    const history = (await call('GET', `${url}/history`, token, {})).body.history as Array<{ revision: number }>;
    expect(history.map((h) => h.revision)).toEqual([1, 2, 3, 4, 5]);
    expect(now.headers.etag).toBe('"5"');
    expect((await call('GET', `${url}?revision=5`, token, {})).body.constituent).toEqual(now.body.constituent);
    expect(now.body.constituent.FirstName).toBe('D');
    expect((await call('GET', url, token, { 'if-none-match': '"5"' })).status).toBe(304);
  });

  it('shows the record\'s fields only, none of what its row keeps besides (the revision)', async () => {
    const { url, id, token } = await constituentTeam();
    const patched = await call('PATCH', url, token, {}, { FirstName: 'Shown' });
    expect(((await t.runtime.services.store.get<Record<string, unknown>>('constituents', id)) ?? {})._revision).toBe(2);
    const read = await call('GET', url, token, {});
    expect(Object.keys(read.body.constituent).filter((k) => k.startsWith('_'))).toEqual([]);
    expect(read.raw).not.toContain('_revision');
    expect(read.body).toEqual({ constituent: patched.body.constituent });
  });

  it('reads no event of the log for a single read or its 304', async () => {
    const { token, url } = await constituentTeam();
    await call('PATCH', url, token, {}, { FirstName: 'Two' });
    const log = t.runtime.services.log;
    const reads = [vi.spyOn(log, 'readStream'), ...(log.readStreamBackwards ? [vi.spyOn(log, 'readStreamBackwards')] : [])];
    try {
      expect((await call('GET', url, token, {})).headers.etag).toBe('"2"');
      expect((await call('GET', url, token, { 'if-none-match': '"2"' })).status).toBe(304);
      for (const read of reads) expect(read).not.toHaveBeenCalled();
    } finally {
      for (const read of reads) read.mockRestore();
    }
  });

  it('is never newer than the body: a row the projector has not yet brought up shows its own revision, and If-Match still checks the log', async () => {
    const { token, url, id } = await constituentTeam();
    await call('PATCH', url, token, {}, { FirstName: 'Later' });
    // The row as it stood before write 2 was projected: a read model lagging its log.
    const store = t.runtime.services.store;
    const row = await store.get<Record<string, unknown>>('constituents', id);
    await store.put('constituents', { ...row, FirstName: null, _revision: 1 });
    const lagging = await call('GET', url, token, {});
    expect(lagging.headers.etag).toBe('"1"');
    expect(lagging.body.constituent.FirstName).toBeNull();
    const stale = await call('PATCH', url, token, { 'if-match': '"1"' }, { FirstName: 'Stale' });
    expect(stale.status).toBe(412);
    const ok = await call('PATCH', url, token, { 'if-match': '"2"' }, { FirstName: 'Fresh' });
    expect(ok.status).toBe(200);
    expect(ok.headers.etag).toBe('"3"');
    expect(ok.body.constituent.FirstName).toBe('Fresh');
  });

  it('tags the other three records from their rows too', async () => {
    const { api, keys, volunteer, task } = await taskTeam(t);
    const token = keys.Integration.key as string;
    const v = await volunteer('Ann');
    const k = await task();
    const assigned = await call('PATCH', `/api/v1/volunteer-tasks/${k.PkTask}`, token, {}, { FkVolunteer: v.id });
    expect(assigned.headers.etag).toBe('"2"');
    const event = await api.post('/events', { EventTitle: 'Fair', StartDate: '2030-05-01' });
    const log = t.runtime.services.log;
    const reads = [vi.spyOn(log, 'readStream'), ...(log.readStreamBackwards ? [vi.spyOn(log, 'readStreamBackwards')] : [])];
    try {
      expect((await call('GET', `/api/v1/volunteer-tasks/${k.PkTask}`, token, {})).headers.etag).toBe('"2"');
      expect((await call('GET', `/api/v1/volunteers/${v.id}`, token, {})).headers.etag).toBe('"1"');
      expect((await call('GET', `/api/v1/events/${event.body.event.PkEvent}`, token, {})).headers.etag).toBe(event.headers.etag);
      for (const read of reads) expect(read).not.toHaveBeenCalled();
    } finally {
      for (const read of reads) read.mockRestore();
    }
  });
});

describe('ETags everywhere §11 names them (after a review of the whole section)', () => {
  it('single reads of task groups and ticket sales carry the record\'s ETag, and If-None-Match with it is 304', async () => {
    const team = await t.team();
    const token = team.keys.Integration.key as string;
    const group = (await team.admin.post('/volunteer-task-groups', { TaskGroupTitle: 'Doors' })).body.volunteerTaskGroup.PkTaskGroup as number;
    const event = (await team.api.Integration.post('/events', { EventTitle: 'Gala', StartDate: '2026-05-01' })).body.event.PkEvent as number;
    const buyer = (await team.api.Integration.post('/constituents', { LastName: 'Buyer' })).body.constituent.PkConstituent as number;
    const sale = (await team.admin.post('/event-tickets', { FkEvent: event, FkConstituent: buyer, GrossAmount: 25 })).body.eventTicket.PkEventTicket as number;
    for (const url of [`/api/v1/volunteer-task-groups/${group}`, `/api/v1/event-tickets/${sale}`]) {
      const read = await call('GET', url, token, {});
      expect(read.status).toBe(200);
      expect(read.headers.etag).toBe('"1"');
      expect((await call('GET', url, token, { 'if-none-match': '"1"' })).status).toBe(304);
      expect((await call('GET', url, token, { 'if-none-match': '"2"' })).status).toBe(200);
    }
  });

  it('compares If-Match by its characters: "01" is not the ETag "1" (412, nothing written)', async () => {
    const { token, url } = await constituentTeam();
    const r = await call('PATCH', url, token, { 'if-match': '"01"' }, { FirstName: 'X' });
    expect(r.status).toBe(412);
    expect((await call('GET', url, token, {})).body.constituent.FirstName).toBeNull();
    expect((await call('GET', url, token, { 'if-none-match': '"01"' })).status).toBe(200);
  });

  it('guards the admin DELETE of a donation and of a recurring gift with If-Match: another revision is 412 and nothing is written', async () => {
    const team = await t.team();
    const admin = t.runtime.services.config.adminToken!;
    const donor = (await team.api.Integration.post('/constituents', { FirstName: 'Donor' })).body.constituent.PkConstituent as number;
    const donation = (await team.admin.post('/donations', { FkConstituent: donor, Amount: 100 })).body.donation.PkDonation as number;
    const url = `/admin/v1/teams/${team.id}/donations/${donation}`;
    expect((await call('DELETE', url, admin, { 'if-match': '"99"' })).status).toBe(412);
    expect((await team.admin.post(`/donations/${donation}/thank`)).status).toBe(200);
    const deleted = await call('DELETE', url, admin, { 'if-match': '"2"' });
    expect(deleted.status).toBe(200);
    expect(deleted.headers.etag).toBe('"3"');
    const gift = (await team.admin.post('/recurring-gifts', { FkConstituent: donor, Amount: 10, Frequency: 'monthly', StartDate: '2030-01-01' })).body.recurringGift.PkRecurringGift as number;
    const giftUrl = `/admin/v1/teams/${team.id}/recurring-gifts/${gift}`;
    expect((await call('DELETE', giftUrl, admin, { 'if-match': '"99"' })).status).toBe(412);
    expect((await call('DELETE', giftUrl, admin, { 'if-match': '"1"' })).status).toBe(200);
  });
});
