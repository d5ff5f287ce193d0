import { describe, it } from 'vitest';
import type { DomainEvent } from '../../domain/shared/events.js';
import { decideCancel, decideCreate, decideSignUp, decideUpdate, decideVolunteerDeleted } from '../../domain/volunteer-task/decide.js';
import { type TaskState, taskEvolver } from '../../domain/volunteer-task/events.js';
import { given as decider } from '../support/decider.js';

const TEAM = 7;
const TODAY = '2026-03-01';

/** given(events).when(decide).then(events | error code): the shared decider helper. */
const given = (...events: DomainEvent[]) => decider(taskEvolver, events, TEAM);

const created: DomainEvent = { type: 'VolunteerTaskCreated', data: { id: 1, fields: { VolunteerTaskTitle: 'Phone bank', FkVolunteer: null, DateAssigned: null } } };
const assigned = (volunteerId: number, previousVolunteerId: number | null = null, via = 'api'): DomainEvent => ({
  type: 'VolunteerTaskAssigned',
  data: { id: 1, volunteerId, previousVolunteerId, via, DateAssigned: TODAY },
});
/** The field change that precedes every person-event in the same append. */
const fieldChange = (changes: Record<string, unknown>): DomainEvent => ({ type: 'VolunteerTaskUpdated', data: { id: 1, changes } });
const assigning = (volunteerId: number, previousVolunteerId: number | null = null, via = 'api', date = TODAY): DomainEvent[] => [
  fieldChange(previousVolunteerId === null || date !== TODAY ? { FkVolunteer: volunteerId, DateAssigned: date } : { FkVolunteer: volunteerId }),
  { type: 'VolunteerTaskAssigned', data: { id: 1, volunteerId, previousVolunteerId, via, DateAssigned: date } },
];
const unassigning = (volunteerId: number, reason: string): DomainEvent[] => [
  fieldChange({ FkVolunteer: null, DateAssigned: null }),
  { type: 'VolunteerTaskUnassigned', data: { id: 1, volunteerId, reason } },
];
const patch = (body: Record<string, unknown>, ifOpen = false) => (s: TaskState) => decideUpdate({ id: 1, team: TEAM, body, ifOpen, today: TODAY }, s);

describe('assigning a volunteer task', () => {
  it('assigns an unassigned task and stamps DateAssigned with today', () =>
    given(created).when(patch({ FkVolunteer: 5 })).then(assigning(5)));

  it('keeps a DateAssigned that was sent', () =>
    given(created)
      .when(patch({ FkVolunteer: 5, DateAssigned: '2026-02-01' }))
      .then(assigning(5, null, 'api', '2026-02-01')));

  it('refuses a blank VolunteerTaskTitle on PATCH, as on create: required, it is never cleared', () => {
    for (const title of ['', '   ', null]) given(created).when(patch({ VolunteerTaskTitle: title })).thenFails('invalid_field', 'VolunteerTaskTitle');
  });

  it('claims an open task with ifOpen', () => given(created).when(patch({ FkVolunteer: 5 }, true)).then(assigning(5)));

  it('refuses ifOpen on a taken task with not_open', () => given(created, assigned(5)).when(patch({ FkVolunteer: 6 }, true)).thenFails('not_open'));

  it('refuses ifOpen even for the volunteer who holds it', () => given(created, assigned(5)).when(patch({ FkVolunteer: 5 }, true)).thenFails('not_open'));

  it('refuses ifOpen without a volunteer', () => given(created).when(patch({ VolunteerTaskTitle: 'x' }, true)).thenFails('invalid_field', 'ifOpen'));

  it('reassigns with the previous volunteer in the audit trail', () => given(created, assigned(5)).when(patch({ FkVolunteer: 6 })).then(assigning(6, 5)));

  it('unassigns with reason unassigned', () =>
    given(created, assigned(5))
      .when(patch({ FkVolunteer: null }))
      .then(unassigning(5, 'unassigned')));

  it('records nothing when the same volunteer is sent again', () => given(created, assigned(5)).when(patch({ FkVolunteer: 5 })).then([]));

  it('records nothing when unassigning an open task', () => given(created).when(patch({ FkVolunteer: null })).then([]));

  it('keeps field edits apart from the assignment', () =>
    given(created)
      .when(patch({ FkVolunteer: 5, IsComplete: true }))
      .then([fieldChange({ IsComplete: true, FkVolunteer: 5, DateAssigned: TODAY }), assigning(5)[1]]));

  it('refuses a DateAssigned on a task without a volunteer', () =>
    given(created).when(patch({ DateAssigned: '2026-01-01' })).thenFails('invalid_field', 'DateAssigned'));

  it('refuses writes to a locked task', () =>
    given(created, { type: 'VolunteerTaskLocked', data: { id: 1 } }).when(patch({ FkVolunteer: 5 })).thenFails('record_protected'));

  it('refuses an end before the start, naming TaskEndDateTime', () =>
    given(created)
      .when(patch({ TaskStartDateTime: '2026-05-01T10:00:00', TaskEndDateTime: '2026-05-01T09:00:00' }))
      .thenFails('invalid_field', 'TaskEndDateTime'));

  it('creates an assigned task as created, then assigned', () =>
    given()
      .when((s) => decideCreate({ id: 1, body: { VolunteerTaskTitle: 'Phone bank', FkVolunteer: 5 }, today: TODAY }, s))
      .then([created, ...assigning(5)]));

  it('is not_found for another team', () =>
    given(created).when((s) => decideUpdate({ id: 1, team: TEAM + 1, body: { IsComplete: true }, ifOpen: false, today: TODAY }, s)).thenFails('not_found'));
});

describe('the public sign-up and the cancel', () => {
  const signUp = (volunteerId: number) => (s: TaskState) => decideSignUp({ id: 1, team: TEAM, volunteerId, today: TODAY }, s);
  const cancel = (volunteerId?: number) => (s: TaskState) => decideCancel({ id: 1, team: TEAM, volunteerId }, s);

  it('signs up for an open task', () => given(created).when(signUp(5)).then(assigning(5, null, 'signup')));
  it('refuses a taken task with not_open', () => given(created, assigned(6)).when(signUp(5)).thenFails('not_open'));
  it('cancels with reason canceled', () =>
    given(created, assigned(5)).when(cancel()).then(unassigning(5, 'canceled')));
  it('refuses to cancel for a volunteer who does not hold the task', () => given(created, assigned(6)).when(cancel(5)).thenFails('invalid_field', 'FkVolunteer'));
  it('records nothing when an open task is canceled', () => given(created).when(cancel()).then([]));
  it('unassigns a deleted volunteer with reason volunteer_deleted', () =>
    given(created, assigned(5))
      .when((s) => decideVolunteerDeleted({ id: 1, volunteerId: 5 }, s))
      .then(unassigning(5, 'volunteer_deleted')));
  it('leaves tasks of other volunteers alone when one is deleted', () =>
    given(created, assigned(6)).when((s) => decideVolunteerDeleted({ id: 1, volunteerId: 5 }, s)).then([]));
});
