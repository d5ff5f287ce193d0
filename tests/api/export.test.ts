import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ndjson } from '../../api/routes/admin/changes.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { taskTeam } from './volunteer-support.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const lines = (raw: string) => raw.split('\n').filter(Boolean).map((l) => JSON.parse(l));

async function team() {
  const tm = await taskTeam(t);
  const v = await tm.volunteer('Ada');
  const task = await tm.task();
  await tm.api.patch(`/volunteer-tasks/${task.PkTask}`, { FkVolunteer: v.id });
  await tm.api.post('/constituents', { FirstName: 'Late', LastName: 'Comer' });
  const feed = (await tm.admin.get('/changes?limit=1000')).body;
  return { ...tm, feed };
}

describe('exporting a team\u2019s changes', () => {
  it('streams every envelope of the feed as NDJSON', async () => {
    const tm = await team();
    const r = await t.app.inject({ method: 'GET', url: `/admin/v1/teams/${tm.id}/export`, headers: { authorization: 'Bearer test-admin-token' } });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(lines(r.body)).toEqual(tm.feed.changes);
    expect(tm.feed.changes.length).toBeGreaterThanOrEqual(6);
  });

  it('takes from and to as cursors (from exclusive, to inclusive) or date-times (both inclusive), and types', async () => {
    const tm = await team();
    const all = tm.feed.changes;
    const first2 = (await tm.admin.get('/changes?limit=2')).body.next;
    const first4 = (await tm.admin.get('/changes?limit=4')).body.next;
    const get = async (q: string) => {
      const r = await t.app.inject({ method: 'GET', url: `/admin/v1/teams/${tm.id}/export?${q}`, headers: { authorization: 'Bearer test-admin-token' } });
      expect(r.statusCode, r.body).toBe(200);
      return lines(r.body);
    };
    expect(await get(`from=${first2}&to=${first4}`)).toEqual(all.slice(2, 4));
    expect(await get(`from=${first2}`)).toEqual(all.slice(2));
    expect(await get('types=volunteer_task.*')).toEqual(all.filter((e: any) => e.type.startsWith('volunteer_task.')));
    const at = new Date(all[0].created * 1000).toISOString();
    expect(await get(`from=${at}&to=2999-01-01T00:00:00Z`)).toEqual(all);
    expect(await get('to=2000-01-01T00:00:00Z')).toEqual([]);
  });

  it.each([
    ['from=nope', 'from'],
    ['to=2026-13-01T00:00:00Z', 'to'],
    ['types=volunteer.nope', 'types'],
    ['from=2026-12-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'to'],
    // A cursor past what the feed's envelope numbers hold (was a 500), as from and as to.
    [`from=${Buffer.from('c1.9223372036854775807.9223372036854775807.1').toString('base64url')}`, 'from'],
    [`to=${Buffer.from('c1.1.9223372036854775808.1').toString('base64url')}`, 'to'],
  ])('refuses %s as invalid_field naming %s', async (q, field) => {
    const tm = await t.team();
    const r = await tm.admin.get(`/export?${q}`);
    expect(r.status, r.raw).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'invalid_field', field });
  });

  it('is 404 for an unknown team', async () => {
    const r = await t.admin.get('/teams/999999/export');
    expect(r.status).toBe(404);
  });

  it('pulls a page only when the reader has taken the one before (back-pressure)', async () => {
    let pulled = 0;
    async function* pages() {
      for (let i = 0; i < 100; i++) {
        pulled++;
        yield [JSON.stringify({ page: i })];
      }
    }
    const stream = ndjson(pages());
    stream.pause();
    await new Promise((r) => setTimeout(r, 50));
    expect(pulled).toBeLessThanOrEqual(2);
    let n = 0;
    for await (const _ of stream) n++;
    expect([n, pulled]).toEqual([100, 100]);
  });
});
