import { DomainError, invalidField } from '../shared/errors.js';
import { changedFields, normaliseFields, requireText, type Values } from '../shared/fields.js';
import { assertWritable } from '../shared/record.js';
import { ASSIGNED, type AssignVia, type TaskState, UNASSIGNED, type TaskEvent } from './events.js';
import { TASK_FIELDS, TASK_GEOGRAPHY_FIELDS, TASK_READ_ONLY, checkTaskTimes } from './rules.js';

export const notOpen = (id: number, holder: unknown) =>
  new DomainError('not_open', `Task ${id} is already assigned (FkVolunteer ${holder}); it is not open to claim.`);

export const taskBusy = (id: number) =>
  new DomainError('task_busy', `Another sign-up or assignment for task ${id} was being saved at the same time; nothing changed. Read the task and retry.`);

const dateWithoutVolunteer = () =>
  invalidField('DateAssigned', 'DateAssigned belongs to an assignment; send it with FkVolunteer, or on a task that has a volunteer.');

const holderOf = (state: TaskState) => (state.fields.FkVolunteer as number | null | undefined) ?? null;

function assigned(id: number, volunteerId: number, previous: number | null, via: AssignVia, date: unknown, today: string): TaskEvent {
  return { type: ASSIGNED, data: { id, volunteerId, previousVolunteerId: previous, via, DateAssigned: (date as string | null | undefined) ?? today } };
}

/**
 * A change of volunteer is two events in one append: the field change (VolunteerTaskUpdated, which
 * fires volunteer_task.updated) and the person-event (Assigned/Unassigned: the audit trail and
 * signed_up, canceled or unassigned). Each has its own log position, so each webhook has its own
 * envelope id and a receiver de-duplicating on id keeps both (spec 6.6, decisions.md 7).
 */
function withFieldChange(state: TaskState, id: number, changes: Values, person: TaskEvent): TaskEvent[] {
  const volunteer = person.type === ASSIGNED ? { FkVolunteer: person.data.volunteerId, DateAssigned: person.data.DateAssigned } : { FkVolunteer: null, DateAssigned: null };
  const all = { ...changes, ...changedFields(state.fields, volunteer) };
  return [{ type: 'VolunteerTaskUpdated', data: { id, changes: all } }, person];
}

/** Validates a create without deciding it: a failed create must write nothing, not even an id. */
export function validateCreate(body: Values): Values {
  const sent = normaliseFields(TASK_FIELDS, body, TASK_READ_ONLY);
  requireText(sent, 'VolunteerTaskTitle', 'VolunteerTaskTitle is required and cannot be empty.');
  checkTaskTimes(sent);
  if ((sent.FkVolunteer ?? null) === null && (sent.DateAssigned ?? null) !== null) throw dateWithoutVolunteer();
  return sent;
}

/** A task created with a volunteer is created, then assigned: the assignment has its side effects. */
export function decideCreate(cmd: { id: number; body: Values; today: string }, state: TaskState): TaskEvent[] {
  if (state.exists) throw new Error(`task ${cmd.id} already exists`);
  const { FkVolunteer, DateAssigned, ...fields } = validateCreate(cmd.body);
  const blank = { ...fields, FkVolunteer: null, DateAssigned: null };
  const created: TaskEvent = { type: 'VolunteerTaskCreated', data: { id: cmd.id, fields: blank } };
  if (typeof FkVolunteer !== 'number') return [created];
  const person = assigned(cmd.id, FkVolunteer, null, 'api', DateAssigned, cmd.today);
  return [created, ...withFieldChange({ ...state, fields: blank }, cmd.id, {}, person)];
}

export interface UpdateTask {
  id: number;
  team: number;
  body: Values;
  /** `ifOpen=true`: assign only while the task is unassigned (spec 3). */
  ifOpen: boolean;
  today: string;
}

/**
 * A PATCH (spec 3): field edits become VolunteerTaskUpdated; a change of FkVolunteer becomes an
 * assignment (DateAssigned stamped today when not sent), a reassignment (previousVolunteerId set)
 * or an unassignment. With ifOpen, a task that has a volunteer is not_open.
 */
export function decideUpdate(cmd: UpdateTask, state: TaskState): TaskEvent[] {
  const sent = normaliseFields(TASK_FIELDS, cmd.body, TASK_READ_ONLY);
  // Required, so never cleared (decisions.md §3): blank is refused as on create.
  if ('VolunteerTaskTitle' in sent) requireText(sent, 'VolunteerTaskTitle', 'VolunteerTaskTitle is required and cannot be empty.');
  if (cmd.ifOpen && typeof sent.FkVolunteer !== 'number')
    throw invalidField('ifOpen', 'ifOpen=true claims the task for a volunteer: send FkVolunteer with the volunteer id.');
  assertWritable(state, cmd.team, 'volunteer task', cmd.id);
  const holder = holderOf(state);
  if (cmd.ifOpen && holder !== null) throw notOpen(cmd.id, holder);
  const { FkVolunteer, ...rest } = sent;
  const target = 'FkVolunteer' in sent ? ((FkVolunteer as number | null) ?? null) : holder;
  const assigning = target !== null && target !== holder;
  if (assigning) delete rest.DateAssigned;
  checkTaskTimes({ ...state.fields, ...rest });
  if (target === null && (rest.DateAssigned ?? null) !== null) throw dateWithoutVolunteer();
  if (target === null && 'DateAssigned' in rest) delete rest.DateAssigned;
  const changes = changedFields(state.fields, rest);
  if (assigning) return withFieldChange(state, cmd.id, changes, assigned(cmd.id, target, holder, 'api', sent.DateAssigned, cmd.today));
  if (target === null && holder !== null)
    return withFieldChange(state, cmd.id, changes, { type: UNASSIGNED, data: { id: cmd.id, volunteerId: holder, reason: 'unassigned' } });
  return Object.keys(changes).length ? [{ type: 'VolunteerTaskUpdated', data: { id: cmd.id, changes } }] : [];
}

/** The public sign-up (decisions.md 9): a claim like ifOpen=true, serialised with it. */
export function decideSignUp(cmd: { id: number; team: number; volunteerId: number; today: string }, state: TaskState): TaskEvent[] {
  assertWritable(state, cmd.team, 'volunteer task', cmd.id);
  const holder = holderOf(state);
  if (holder !== null) throw notOpen(cmd.id, holder);
  return withFieldChange(state, cmd.id, {}, assigned(cmd.id, cmd.volunteerId, null, 'signup', null, cmd.today));
}

/**
 * The volunteer's own cancel. Naming the volunteer guards against canceling someone who took the
 * task over meanwhile; canceling an open task records nothing.
 */
export function decideCancel(cmd: { id: number; team: number; volunteerId?: number }, state: TaskState): TaskEvent[] {
  assertWritable(state, cmd.team, 'volunteer task', cmd.id);
  const holder = holderOf(state);
  if (cmd.volunteerId !== undefined && holder !== cmd.volunteerId)
    throw invalidField('FkVolunteer', `Task ${cmd.id} is not held by volunteer ${cmd.volunteerId}; there is nothing of theirs to cancel.`);
  if (holder === null) return [];
  return withFieldChange(state, cmd.id, {}, { type: UNASSIGNED, data: { id: cmd.id, volunteerId: holder, reason: 'canceled' } });
}

/** A deleted volunteer's tasks become unassigned (decisions.md 7), locked or not: it is a consequence, not an edit. */
export function decideVolunteerDeleted(cmd: { id: number; volunteerId: number }, state: TaskState): TaskEvent[] {
  if (!state.exists || state.deleted || holderOf(state) !== cmd.volunteerId) return [];
  return withFieldChange(state, cmd.id, {}, { type: UNASSIGNED, data: { id: cmd.id, volunteerId: cmd.volunteerId, reason: 'volunteer_deleted' } });
}

/** The task's own district and precinct, from the application surface. */
export function decideGeography(cmd: { id: number; team: number; body: Values }, state: TaskState): TaskEvent[] {
  const sent = normaliseFields(TASK_GEOGRAPHY_FIELDS, cmd.body);
  assertWritable(state, cmd.team, 'volunteer task', cmd.id);
  const changes = changedFields(state.fields, sent);
  return Object.keys(changes).length ? [{ type: 'VolunteerTaskUpdated', data: { id: cmd.id, changes } }] : [];
}
