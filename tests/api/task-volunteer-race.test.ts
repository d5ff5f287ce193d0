import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskStream } from '../../domain/volunteer-task/events.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { holdLogCall } from '../support/held-log.js';
import { taskTeam } from './volunteer-support.js';

/**
 * decisions.md 7, a deleted volunteer's tasks become unassigned, under an assignment racing the
 * delete (the shape review 27e found for registrations): the assignment is held after its check
 * of the volunteer, at its read of the task's stream, while the volunteer is deleted.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const typesOf = async (stream: string) => (await t.runtime.services.log.readStream(stream)).map((e) => e.type);

describe('an assignment racing the delete of its volunteer (decisions.md 7)', () => {
  it('a PATCH assigning the volunteer: the task ends unassigned (volunteer_deleted)', async () => {
    const team = await taskTeam(t);
    const v = await team.volunteer('Val');
    const task = await team.task();
    const held = holdLogCall(t, 'readStream', taskStream(task.PkTask));
    const assigning = team.api.patch(`/volunteer-tasks/${task.PkTask}`, { FkVolunteer: v.id });
    await held.reached;
    expect((await team.admin.del(`/volunteers/${v.id}`)).status).toBe(200);
    held.release();
    const r = await assigning;
    expect(r.status, r.raw).toBe(200);
    expect(r.body.volunteerTask.FkVolunteer).toBeNull();
    expect((await team.api.get(`/volunteer-tasks/${task.PkTask}`)).body.volunteerTask.FkVolunteer).toBeNull();
    const events = await t.runtime.services.log.readStream(taskStream(task.PkTask));
    expect(events.filter((e) => e.type === 'VolunteerTaskUnassigned').map((e) => e.data)).toEqual([expect.objectContaining({ volunteerId: v.id, reason: 'volunteer_deleted' })]);
  });

  it('a create assigning the volunteer, whose constituent is deleted meanwhile (the cascade): the task ends unassigned', async () => {
    const team = await taskTeam(t);
    const v = await team.volunteer('Cid');
    const held = holdLogCall(t, 'readStream', (s) => s.startsWith('volunteer_task-'));
    const creating = team.api.post('/volunteer-tasks', { VolunteerTaskTitle: 'Phones', FkVolunteer: v.id });
    await held.reached;
    expect((await team.admin.del(`/constituents/${v.constituent}`)).status).toBe(200);
    held.release();
    const r = await creating;
    expect(r.status, r.raw).toBe(201);
    expect(r.body.volunteerTask.FkVolunteer).toBeNull();
    expect(await typesOf(taskStream(r.body.volunteerTask.PkTask))).toEqual(['VolunteerTaskCreated', 'VolunteerTaskUpdated', 'VolunteerTaskAssigned', 'VolunteerTaskUpdated', 'VolunteerTaskUnassigned']);
  });

  it('the cascade finds the assignment too: it is unassigned once', async () => {
    const team = await taskTeam(t);
    const v = await team.volunteer('Bo');
    const task = await team.task();
    // Held at its look at the volunteer, once the assignment is written and readable.
    const held = holdLogCall(t, 'readStream', `volunteer-${v.id}`);
    const assigning = team.api.patch(`/volunteer-tasks/${task.PkTask}`, { FkVolunteer: v.id });
    await Promise.race([held.reached, assigning]);
    expect(held.wasReached, 'the assignment looks at its volunteer in the log').toBe(true);
    expect((await team.admin.del(`/volunteers/${v.id}`)).status).toBe(200);
    held.release();
    expect((await assigning).status).toBe(200);
    const events = await t.runtime.services.log.readStream(taskStream(task.PkTask));
    expect(events.filter((e) => e.type === 'VolunteerTaskUnassigned')).toHaveLength(1);
  });
});
