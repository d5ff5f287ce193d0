import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { constituentStream } from '../../domain/constituent/events.js';
import { volunteerClaimStream, volunteerStream } from '../../domain/volunteer/events.js';
import { taskStream } from '../../domain/volunteer-task/events.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { holdLogCall } from '../support/held-log.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** Makes the next readStream of `stream` fail once, once armed (a transient log read error). */
function failNextRead(stream: string) {
  const log = t.runtime.services.log;
  let armed = false;
  t.runtime.services.log = new Proxy(log, {
    get(target, prop) {
      const v = Reflect.get(target, prop);
      if (typeof v !== 'function') return v;
      if (prop !== 'readStream') return v.bind(target);
      return async (s: string, ...rest: unknown[]) => {
        if (armed && s === stream) {
          armed = false;
          throw new Error('transient read failure');
        }
        return (v as (...a: unknown[]) => unknown).call(target, s, ...rest);
      };
    },
  });
  return { arm: () => (armed = true), restore: () => (t.runtime.services.log = log) };
}

async function race(send: (api: any, c: number) => Promise<any>) {
  const team = await t.team([['Integration', 'read_write']]);
  const api = team.api.Integration;
  const c = (await api.post('/constituents', { FirstName: 'Ray', LastName: 'Doe' })).body.constituent.PkConstituent as number;
  const failing = failNextRead(constituentStream(c));
  // The registration passed its check of the constituent; held before its claim.
  const held = holdLogCall(t, 'append', volunteerClaimStream(c));
  const first = send(api, c);
  await held.reached;
  expect((await team.admin.del(`/constituents/${c}`)).status).toBe(200); // its cascade finds no volunteer yet
  failing.arm(); // the registration's look at its constituent (3395c01) fails once
  held.release();
  const r1 = await first;
  failing.restore();
  return { api, c, r1 };
}

describe('a registration whose look at its constituent failed after its commit, retried with its key (review of the session\'s change)', () => {
  it('single write: the retry looks again and deletes the volunteer (as the commit says)', async () => {
    const headers = { 'idempotency-key': 'reg-single' };
    const { api, c, r1 } = await race((api, c) => api.post('/volunteers', { FkConstituent: c }, { headers }));
    expect(r1.status, r1.raw).toBeGreaterThanOrEqual(500);
    const r2 = await api.post('/volunteers', { FkConstituent: c }, { headers });
    expect(r2.status, r2.raw).toBe(201);
    expect((await api.get(`/volunteers/${r2.body.volunteer.PkVolunteer}`)).status).toBe(404);
  });

  it('batch item: the retry looks again for the item its earlier try committed, and deletes the volunteer', async () => {
    const headers = { 'idempotency-key': 'reg-batch' };
    const { api, c, r1 } = await race((api, c) => api.post('/volunteers/batch', { items: [{ FkConstituent: c }] }, { headers }));
    expect(r1.status, r1.raw).toBeGreaterThanOrEqual(500);
    const r2 = await api.post('/volunteers/batch', { items: [{ FkConstituent: c }] }, { headers });
    expect(r2.status, r2.raw).toBe(200);
    const v = r2.body.results[0].volunteer?.PkVolunteer ?? r2.body.results[0].id;
    expect(r2.body.results[0].status, JSON.stringify(r2.body.results[0])).toBe(201);
    expect((await api.get(`/constituents/${c}`)).status).toBe(404);
    // spec 2.2: a volunteer is always an existing constituent
    expect((await api.get(`/volunteers/${v}`)).status).toBe(404);
  });
});

describe('an assignment whose look at its volunteer failed after its commit, retried with its key', () => {
  it('batch task create: the retry looks again for the item its earlier try committed, and unassigns the deleted volunteer', async () => {
    const { taskTeam } = await import('../api/volunteer-support.js');
    const team = await taskTeam(t);
    const v = await team.volunteer('Val');
    const failing = failNextRead(volunteerStream(v.id));
    // The create passed its check of the volunteer; held at its task append.
    const held = holdLogCall(t, 'append', (s) => s.startsWith(taskStream(0).replace(/0$/, '')));
    const headers = { 'idempotency-key': 'task-batch' };
    const items = [{ VolunteerTaskTitle: 'Canvass', FkVolunteer: v.id }];
    const first = team.api.post('/volunteer-tasks/batch', { items }, { headers });
    await held.reached;
    expect((await team.admin.del(`/volunteers/${v.id}`)).status).toBe(200); // its cascade finds no task yet
    failing.arm();
    held.release();
    const r1 = await first;
    failing.restore();
    expect(r1.status, r1.raw).toBeGreaterThanOrEqual(500);
    const r2 = await team.api.post('/volunteer-tasks/batch', { items }, { headers });
    expect(r2.status, r2.raw).toBe(200);
    const id = r2.body.results[0].volunteerTask.PkVolunteerTask ?? r2.body.results[0].volunteerTask.PkTask;
    expect((await team.api.get(`/volunteers/${v.id}`)).status).toBe(404);
    // decisions.md 7: a deleted volunteer's tasks become unassigned
    expect((await team.api.get(`/volunteer-tasks/${id}`)).body.volunteerTask.FkVolunteer).toBeNull();
  });
});
