import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { type TaskTeam, taskTeam } from './volunteer-support.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

async function volunteers(team: TaskTeam, n: number) {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await team.volunteer(`V${i}x`)).id);
  return out;
}

const codes = (rs: Array<{ status: number; body: any }>) => rs.map((r) => (r.status === 200 ? 200 : `${r.status} ${r.body.error?.code}`));

describe('claiming an open task', () => {
  it('lets exactly one of twenty racing ifOpen claims win', async () => {
    const team = await taskTeam(t);
    const vs = await volunteers(team, 20);
    const k = await team.task();
    const answers = await Promise.all(vs.map((v) => team.api.patch(`/volunteer-tasks/${k.PkTask}?ifOpen=true`, { FkVolunteer: v })));
    const c = codes(answers);
    expect(c.filter((x) => x === 200)).toHaveLength(1);
    for (const x of c) expect([200, '409 not_open', '409 task_busy']).toContain(x);
    const winner = vs[c.indexOf(200)];
    expect((await team.api.get(`/volunteer-tasks/${k.PkTask}`)).body.volunteerTask.FkVolunteer).toBe(winner);
    const h = (await team.admin.get(`/history/volunteer-tasks/${k.PkTask}`)).body.events;
    expect(h.filter((e: { type: string }) => e.type === 'VolunteerTaskAssigned')).toHaveLength(1);
  });

  it('serialises the public sign-up with ifOpen claims', async () => {
    const team = await taskTeam(t);
    const vs = await volunteers(team, 20);
    const k = await team.task();
    const answers = await Promise.all(
      vs.map((v, i) =>
        i % 2 ? team.admin.post(`/volunteer-tasks/${k.PkTask}/sign-up`, { FkVolunteer: v }) : team.api.patch(`/volunteer-tasks/${k.PkTask}?ifOpen=true`, { FkVolunteer: v }),
      ),
    );
    const c = codes(answers);
    expect(c.filter((x) => x === 200)).toHaveLength(1);
    for (const x of c) expect([200, '409 not_open', '409 task_busy']).toContain(x);
    const h = (await team.admin.get(`/history/volunteer-tasks/${k.PkTask}`)).body.events;
    expect(h.filter((e: { type: string }) => e.type === 'VolunteerTaskAssigned')).toHaveLength(1);
  });
});

describe('racing plain assignments', () => {
  it('answers each 200 or task_busy, and ends in the state of one of the 200s', async () => {
    const team = await taskTeam(t);
    const vs = await volunteers(team, 10);
    let busy = 0;
    for (let round = 0; round < 5; round++) {
      const k = await team.task();
      const answers = await Promise.all(vs.map((v) => team.api.patch(`/volunteer-tasks/${k.PkTask}`, { FkVolunteer: v })));
      const c = codes(answers);
      for (const x of c) expect([200, '409 task_busy']).toContain(x);
      busy += c.filter((x) => x !== 200).length;
      const winners = answers.filter((a) => a.status === 200).map((a) => a.body.volunteerTask.FkVolunteer);
      expect(winners.length).toBeGreaterThan(0);
      const final = (await team.api.get(`/volunteer-tasks/${k.PkTask}`)).body.volunteerTask;
      expect(winners).toContain(final.FkVolunteer);
      // Every 200 is one assignment in the log, and nothing else was written.
      const h = (await team.admin.get(`/history/volunteer-tasks/${k.PkTask}`)).body.events;
      expect(h.filter((e: { type: string }) => e.type === 'VolunteerTaskAssigned')).toHaveLength(winners.length);
      expect(h.at(-1).data.volunteerId).toBe(final.FkVolunteer);
    }
    // The requests really raced: some lost to another assignment being saved.
    expect(busy).toBeGreaterThan(0);
  });

  it('retries edits that do not touch FkVolunteer on fresh state instead of failing', async () => {
    const team = await taskTeam(t);
    const vs = await volunteers(team, 5);
    const k = await team.task();
    const edits = Array.from({ length: 10 }, (_, i) => team.api.patch(`/volunteer-tasks/${k.PkTask}`, { ContactName: `C${i}`, Mileage: i }));
    const claims = vs.map((v) => team.api.patch(`/volunteer-tasks/${k.PkTask}?ifOpen=true`, { FkVolunteer: v }));
    const [e, c] = await Promise.all([Promise.all(edits), Promise.all(claims)]);
    expect(e.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(codes(c).filter((x) => x === 200)).toHaveLength(1);
    const h = (await team.admin.get(`/history/volunteer-tasks/${k.PkTask}`)).body.events;
    // Ten edits, and the winning claim's field change.
    expect(h.filter((x: { type: string; data: { changes: object } }) => x.type === 'VolunteerTaskUpdated' && !('FkVolunteer' in x.data.changes))).toHaveLength(10);
  });
});
