import { expect } from 'vitest';
import type { TestApp } from '../support/app.js';
import { formatDateTime } from '../../domain/shared/values.js';

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

/**
 * A volunteer ('Vic', vic@example.org) signed up for a task, whose confirmation a mail server
 * refused by name, recorded as a sender before 2026-11-28 did (the address in the error, which
 * the sender now takes out): the delivery record an erasure must scrub (decisions.md §17).
 */
export async function volunteerWithOlderRefusal(app: TestApp) {
  const team = await taskTeam(app);
  const v = await team.volunteer('Vic');
  await team.task({ TaskStartDateTime: formatDateTime(new Date(Date.now() + 10 * 3_600_000)), FkVolunteer: v.id });
  const [message] = (await team.admin.get('/outbox')).body.notifications;
  const stream = `notification-${message.id}`;
  const metadata = { team: team.id, source: 'Application' as const, keyName: null, correlationId: 'c', at: new Date().toISOString() };
  const log = app.runtime.services.log;
  const claimed = await log.append(stream, [{ type: 'NotificationClaimed', data: { id: message.id, owner: 'old', leaseUntil: new Date(Date.now() + 60_000).toISOString() }, metadata }], 'no_stream');
  const failure = { id: message.id, error: '550 <VIC@EXAMPLE.ORG>: Recipient address rejected', attempt: 1, retryAt: new Date(Date.now() + 3_600_000).toISOString() };
  await log.append(stream, [{ type: 'NotificationAttemptFailed', data: failure, metadata }], claimed.nextExpectedRevision);
  for (let i = 0; !(await team.admin.get('/outbox')).body.notifications[0]?.error?.includes('VIC@'); i++) {
    if (i > 200) throw new Error('the refusal never reached the outbox');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { team, v, stream };
}
