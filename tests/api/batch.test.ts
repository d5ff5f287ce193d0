import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failingAppends } from '../support/failing-appends.js';
import { type Client, startTestApp, type TestApp } from '../support/app.js';
import { rawObjectsAt } from '../support/raw-json.js';

/** decisions.md §14: batch writes on /api/v1 and /admin/v1/teams/:teamId. */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const people = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ FirstName: 'Ada', LastName: `${tag}${i}`, Email1: `${tag}${i}@example.org` }));

/** Every change of the team from the start (the envelopes a ["*"] endpoint receives). */
async function changes(api: Client): Promise<any[]> {
  const out: any[] = [];
  for (let after = ''; ; ) {
    const r = await api.get(`/changes?limit=1000${after ? `&after=${after}` : ''}`);
    expect(r.status, r.raw).toBe(200);
    out.push(...r.body.changes);
    after = r.body.next;
    if (!r.body.hasMore) return out;
  }
}

describe('a batch of constituents', () => {
  it('answers one result per item in order: created ones as the single create, bad ones as its 4xx, and writes only the good', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    const r = await api.post('/constituents/batch', {
      items: [{ FirstName: 'Grace', LastName: 'Hopper' }, { FirstName: 'X', Shoe: 9 }, { FkConstituentType: 2 }, 'not a body', { LastName: 'Lovelace', Phone1: '(617) 555-0100' }],
    });
    expect(r.status, r.raw).toBe(200);
    const [a, b, c, d, e] = r.body.results;
    expect(a).toMatchObject({ status: 201, created: true, constituent: { FirstName: 'Grace', ConstituentName: 'Grace Hopper', FkTeam: team.id } });
    expect(b).toEqual({ status: 400, error: { code: 'unknown_field', message: expect.any(String), field: 'Shoe' } });
    expect(c).toMatchObject({ status: 400, error: { code: 'missing_field', field: 'ConstituentName' } });
    expect(d).toMatchObject({ status: 400, error: { code: 'invalid_json' } });
    expect(e).toMatchObject({ status: 201, created: true, constituent: { LastName: 'Lovelace', Phone1: '6175550100' } });
    expect(e.constituent.PkConstituent).toBeGreaterThan(a.constituent.PkConstituent);
    // Read-your-writes, and the answer is the record as a single read shows it.
    const read = await api.get(`/constituents/${e.constituent.PkConstituent}`);
    expect(read.body.constituent).toEqual(e.constituent);
    // Byte for byte as the single answer writes a record, key order and escaping included.
    expect(rawObjectsAt(r.raw, 'constituent')[1]).toBe(rawObjectsAt(read.raw, 'constituent')[0]);
    expect((await api.get('/constituents?pageSize=1')).body.total).toBe(2);
    // The single create gives the same errors for the same bodies.
    expect((await api.post('/constituents', { FirstName: 'X', Shoe: 9 })).body).toEqual({ error: b.error });
    expect((await api.post('/constituents', { FkConstituentType: 2 })).body).toEqual({ error: c.error });
  });

  it('writes each record as the single create and the single read write it, byte for byte, for strings JSON must escape', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    const bodies = [
      { FirstName: 'A\u2028B', LastName: 'x\ud800y', Email1: 'odd@example.org', Nickname: '</script>"\\' },
      { FirstName: 'Zoë', LastName: '😀', Nickname: null, ConstituentDescription: '\u0000\u001f\t' },
    ];
    const batch = await api.post('/constituents/batch', { items: bodies });
    expect(batch.status, batch.raw).toBe(200);
    const written = rawObjectsAt(batch.raw, 'constituent');
    expect(written).toHaveLength(2);
    // The times and the id differ between writes; everything else is the same text.
    const apart = (text: string) => text.replace(/"(PkConstituent|DateCreated|DateLastModified)":("[^"]*"|\d+)/g, '"$1":_');
    for (let i = 0; i < bodies.length; i++) {
      const read = await api.get(`/constituents/${batch.body.results[i].constituent.PkConstituent}`);
      expect(written[i]).toBe(rawObjectsAt(read.raw, 'constituent')[0]);
      const single = await api.post('/constituents', { ...bodies[i], ...(bodies[i].Email1 ? { Email1: `single-${bodies[i].Email1}` } : {}) });
      expect(single.status, single.raw).toBe(201);
      expect(apart(written[i]).replace('odd@example.org', 'single-odd@example.org')).toBe(apart(rawObjectsAt(single.raw, 'constituent')[0]));
    }
  });

  it('upserts every item by email with mode=upsert&matchOn=email, the matched ones answering 200 created: false', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    const existing = (await api.post('/constituents', { FirstName: 'Old', LastName: 'Name', Email1: 'known@example.org' })).body.constituent;
    const r = await api.post('/constituents/batch?mode=upsert&matchOn=email', {
      items: [{ Email1: 'KNOWN@example.org', Nickname: 'Kay' }, { FirstName: 'New', LastName: 'One', Email1: 'new@example.org' }, { FirstName: 'New', Email1: 'new@example.org', Nickname: 'Again' }],
    });
    expect(r.status, r.raw).toBe(200);
    expect(r.body.results.map((x: any) => [x.status, x.created, x.constituent?.PkConstituent])).toEqual([
      [200, false, existing.PkConstituent],
      [201, true, expect.any(Number)],
      [200, false, r.body.results[1].constituent.PkConstituent],
    ]);
    expect(r.body.results[2].constituent.Nickname).toBe('Again');
    expect((await api.post('/constituents/batch?mode=upsert', { items: [{ LastName: 'A' }] })).body.error).toMatchObject({ code: 'invalid_field', field: 'matchOn' });
  });

  it('ignores If-Match: a stale one neither refuses the batch nor stops an upsert updating the matched record', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    const existing = (await api.post('/constituents', { FirstName: 'Old', LastName: 'Name', Email1: 'stale@example.org' })).body.constituent;
    const r = await api.post('/constituents/batch?mode=upsert&matchOn=email', { items: [{ Email1: 'stale@example.org', Nickname: 'Kept' }, { FirstName: 'Fresh', LastName: 'One', Email1: 'fresh@example.org' }] }, { headers: { 'if-match': '"99"' } });
    expect(r.status, r.raw).toBe(200);
    expect(r.body.results.map((x: any) => [x.status, x.constituent?.PkConstituent])).toEqual([[200, existing.PkConstituent], [201, expect.any(Number)]]);
    expect((await api.get(`/constituents/${existing.PkConstituent}`)).body.constituent.Nickname).toBe('Kept');
  });

  it('refuses a malformed envelope whole: no items, none, more than 1000, an unknown member, not JSON', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    const refused = async (body: unknown, raw?: string) => (await api.post('/constituents/batch', body, raw ? { raw } : {})).body.error;
    expect(await refused({})).toMatchObject({ code: 'missing_field', field: 'items' });
    expect(await refused({ items: [] })).toEqual({ code: 'invalid_field', field: 'items', message: 'items must hold at least 1 item.' });
    expect(await refused({ items: people(1001, 'p') })).toEqual({ code: 'invalid_field', field: 'items', message: 'items must hold at most 1000 items.' });
    expect(await refused({ items: 'x' })).toMatchObject({ code: 'invalid_field', field: 'items' });
    expect(await refused({ items: [{ LastName: 'A' }], more: 1 })).toMatchObject({ code: 'unknown_field', field: 'more' });
    expect(await refused(undefined, '{"items": [')).toMatchObject({ code: 'invalid_json' });
    expect((await api.get('/constituents?pageSize=1')).body.total).toBe(0);
  });

  it('takes bodies past 64 KB up to 16 MiB on the batch routes only', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    const long = (i: number) => ({ LastName: `L${i}`, ConstituentDescription: 'x'.repeat(1000) });
    const r = await api.post('/constituents/batch', { items: [...Array.from({ length: 100 }, (_, i) => long(i)), { LastName: 'Big', ConstituentDescription: 'x'.repeat(70_000) }] });
    expect(r.status, r.raw.slice(0, 200)).toBe(200);
    expect(r.body.results.slice(0, 100).every((x: any) => x.status === 201)).toBe(true);
    // An item the single create would refuse as too large is that item's 413.
    expect(r.body.results[100]).toMatchObject({ status: 413, error: { code: 'payload_too_large' } });
    const huge = await api.post('/constituents/batch', { items: Array.from({ length: 1000 }, (_, i) => ({ LastName: `L${i}`, ConstituentDescription: 'x'.repeat(17_000) })) });
    expect([huge.status, huge.body.error]).toEqual([413, { code: 'payload_too_large', message: 'The body is over 16 MiB; send less.' }]);
    const single = await api.post('/constituents', long(0), { raw: JSON.stringify({ LastName: 'L', ConstituentDescription: 'x'.repeat(70_000) }) });
    expect([single.status, single.body.error.message]).toEqual([413, 'The body is over 64 KB; send less.']);
  });
});

describe('batches of the other records', () => {
  it('register volunteers, create tasks and events as their single creates do', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    const made = (await api.post('/constituents/batch', { items: people(2, 'v') })).body.results.map((x: any) => x.constituent.PkConstituent);
    const vols = await api.post('/volunteers/batch', { items: [{ FkConstituent: made[0] }, { FkConstituent: made[0] }, { FkConstituent: 999999 }, { FkConstituent: made[1], IsStudent: true }] });
    expect(vols.status, vols.raw).toBe(200);
    expect(vols.body.results.map((x: any) => [x.status, x.created ?? x.error.code])).toEqual([[201, true], [200, false], [400, 'invalid_field'], [201, true]]);
    expect(vols.body.results[1].volunteer).toEqual(vols.body.results[0].volunteer);
    const tasks = await api.post('/volunteer-tasks/batch', {
      items: [{ VolunteerTaskTitle: 'Phone bank', FkVolunteer: vols.body.results[3].volunteer.PkVolunteer }, { VolunteerTaskTitle: 'Late', TaskStartDateTime: '2030-01-02T10:00:00Z', TaskEndDateTime: '2030-01-01T10:00:00Z' }],
    });
    expect(tasks.body.results.map((x: any) => x.status)).toEqual([201, 400]);
    expect(tasks.body.results[0].volunteerTask).toMatchObject({ VolunteerTaskTitle: 'Phone bank', VolunteerName: 'Ada v1' });
    const task = tasks.body.results[0].volunteerTask;
    expect(JSON.stringify(task)).toBe(JSON.stringify((await api.get(`/volunteer-tasks/${task.PkTask}`)).body.volunteerTask));
    const events = await api.post('/events/batch', { items: [{ EventTitle: 'Gala', StartTime: '6 PM' }, { EventTitle: 'Bad', FkStatus: 424242 }] });
    expect(events.body.results.map((x: any) => [x.status, x.event?.StartTime ?? x.error.field])).toEqual([[201, '18:00'], [400, 'FkStatus']]);
  });

  it('works on the admin surface, labelled Application, and refuses an unknown team', async () => {
    const team = await t.team();
    const r = await team.admin.post('/constituents/batch', { items: people(3, 'adm') });
    expect(r.body.results.map((x: any) => x.status)).toEqual([201, 201, 201]);
    const activity = (await team.admin.get('/activity')).body.activity.filter((a: any) => a.recordType === 'constituent');
    expect(activity.map((a: any) => a.source)).toEqual(['Application', 'Application', 'Application']);
    expect((await t.admin.post('/teams/999999/constituents/batch', { items: people(1, 'x') })).status).toBe(404);
  });
});

describe('a batch beside the same single creates', () => {
  it('gives the same webhooks and activity entries, ids and times aside', async () => {
    const bodies = people(50, 'same');
    const singles = await t.team();
    for (const b of bodies) expect((await singles.api.Integration.post('/constituents', b)).status).toBe(201);
    const batched = await t.team();
    // With a key, so the batch's journal and marks are there too: they change nothing a subscriber sees.
    const r = await batched.api.Integration.post('/constituents/batch', { items: bodies }, { headers: { 'idempotency-key': 'same-50' } });
    expect(r.body.results.every((x: any) => x.status === 201)).toBe(true);

    const envelope = (e: any) => {
      const { PkConstituent, FkTeam, DateCreated, DateLastModified, ...data } = e.data;
      return { type: e.type, version: e.version, data, team: typeof e.team };
    };
    const fromSingles = (await changes(singles.api.Integration)).map(envelope);
    const fromBatch = (await changes(batched.api.Integration)).map(envelope);
    expect(fromSingles).toHaveLength(50);
    expect(fromBatch).toEqual(fromSingles);

    const entries = async (team: typeof singles) =>
      (await team.admin.get('/activity?pageSize=100')).body.activity.map(({ at, recordId, ...rest }: any) => rest).filter((a: any) => a.recordType === 'constituent');
    const a = await entries(singles);
    expect(a).toHaveLength(50);
    expect(await entries(batched)).toEqual(a);
  });
});


describe('an Idempotency-Key on a batch', () => {
  it('replays the answer to a repeat and writes nothing again', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    const headers = { 'idempotency-key': 'batch-1' };
    const first = await api.post('/constituents/batch', { items: people(3, 'k') }, { headers });
    const again = await api.post('/constituents/batch', { items: people(3, 'k') }, { headers });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await api.get('/constituents?pageSize=1')).body.total).toBe(3);
  });

  it('after a 5xx part-way, re-runs only the items that did not commit', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    // The log fails the 5th constituent's append, once: items before it committed, it did not.
    const log = failingAppends(t, [5]);
    const items = people(8, 'r');
    const headers = { 'idempotency-key': 'resume-1' };
    try {
      const failed = await api.post('/constituents/batch', { items }, { headers });
      expect(failed.status).toBe(500);
      const written = (await api.get('/constituents?pageSize=100')).body.constituents.map((c: any) => c.LastName);
      expect(written).toContain('r0');
      expect(written).not.toContain('r4');
      const retried = await api.post('/constituents/batch', { items }, { headers });
      expect(retried.status, retried.raw).toBe(200);
      expect(retried.body.results.map((x: any) => [x.status, x.constituent.LastName])).toEqual(items.map((b) => [201, b.LastName]));
      const all = (await api.get('/constituents?pageSize=100')).body;
      expect(all.total).toBe(8);
      expect(all.constituents.map((c: any) => c.PkConstituent)).toEqual(retried.body.results.map((x: any) => x.constituent.PkConstituent).sort((a: number, b: number) => a - b));
      expect((await changes(api)).filter((e) => e.type === 'constituent.created')).toHaveLength(8);
    } finally {
      t.runtime.services.log = log;
    }
  });
});

describe('an Idempotency-Key on a batch that failed part-way', () => {
  it('stays bound to its batch: another body on it is 422, and the same body, failing again, then once more, writes each item once', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    // The 3rd and the 6th constituent appends fail, counted across the tries.
    const log = failingAppends(t, [3, 6]);
    const items = people(8, 'w');
    const headers = { 'idempotency-key': 'resume-2' };
    try {
      expect((await api.post('/constituents/batch', { items }, { headers })).status).toBe(500);
      // Items 0 and 1 of the first body committed under this key: another body must not be answered with them.
      const other = await api.post('/constituents/batch', { items: people(2, 'o') }, { headers });
      expect([other.status, other.body.error?.code]).toEqual([422, 'idempotency_key_reused']);
      expect((await api.post('/constituents/batch', { items }, { headers })).status).toBe(500);
      const done = await api.post('/constituents/batch', { items }, { headers });
      expect(done.status, done.raw).toBe(200);
      expect(done.body.results.map((x: any) => [x.status, x.constituent.LastName])).toEqual(items.map((b) => [201, b.LastName]));
      const all = (await api.get('/constituents?pageSize=100')).body;
      expect(all.constituents.map((c: any) => c.LastName).sort()).toEqual(items.map((b) => b.LastName).sort());
      expect((await changes(api)).filter((e) => e.type === 'constituent.created')).toHaveLength(8);
    } finally {
      t.runtime.services.log = log;
    }
  });
});

describe('rate limits', () => {
  it('count a batch as one request', async () => {
    const limited = await startTestApp({ rateLimitPerSecond: 0, rateLimitPerMinute: 100 });
    try {
      const api = (await limited.team()).api.Integration;
      const r = await api.post('/constituents/batch', { items: people(20, 'rl') });
      expect(r.status).toBe(200);
      expect(r.headers['ratelimit-remaining']).toBe('99');
    } finally {
      await limited.close();
    }
  });
});
