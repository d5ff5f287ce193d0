import { expect } from 'vitest';
import type { TestApp } from '../support/app.js';

/** A team with helpers for volunteer and task tests: volunteers with a constituent each, and tasks. */
export async function taskTeam(app: TestApp) {
  const team = await app.team();
  const api = team.api.Integration;
  const volunteer = async (FirstName: string) => {
    const c = await api.post('/constituents', { FirstName, LastName: 'Roe', Email1: `${FirstName.toLowerCase()}@example.org`, Phone1: '5558675309' });
    const v = await api.post('/volunteers', { FkConstituent: c.body.constituent.PkConstituent });
    expect(v.status, v.raw).toBe(201);
    return { id: v.body.volunteer.PkVolunteer as number, constituent: c.body.constituent.PkConstituent as number };
  };
  const task = async (body: Record<string, unknown> = {}) => {
    const r = await api.post('/volunteer-tasks', { VolunteerTaskTitle: 'Canvass', ...body });
    expect(r.status, r.raw).toBe(201);
    return r.body.volunteerTask;
  };
  return { ...team, api, volunteer, task };
}

export type TaskTeam = Awaited<ReturnType<typeof taskTeam>>;

/**
 * A mix of changes for feed tests: a volunteer created, a task assigned to it (a person-event and
 * its `volunteer_task.updated`), the constituent updated, an event created and deleted.
 */
export async function writeMixedChanges(team: TaskTeam): Promise<void> {
  const v = await team.volunteer('Ada');
  const task = await team.task();
  await team.api.patch(`/volunteer-tasks/${task.PkTask}`, { FkVolunteer: v.id });
  await team.api.patch(`/constituents/${v.constituent}`, { Nickname: 'Countess' });
  const e = await team.api.post('/events', { EventTitle: 'Rally', StartDate: '2030-05-01' });
  expect(e.status, e.raw).toBe(201);
  await team.admin.del(`/events/${e.body.event.PkEvent}`);
}
