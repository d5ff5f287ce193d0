import { invalidField, missingField } from '../shared/errors.js';
import { changedFields, normaliseFields, type Values } from '../shared/fields.js';
import { assertWritable } from '../shared/record.js';
import { type VolunteerState, type VolunteerEvent } from './events.js';
import { VOLUNTEER_FIELDS, VOLUNTEER_READ_ONLY } from './rules.js';

export interface UpdateVolunteer {
  id: number;
  team: number;
  body: Values;
  /** Today's date (YYYY-MM-DD, UTC): the default of the status dates. Time arrives in the command. */
  today: string;
}

/** An end before its start is refused, naming the date that was sent (the end when both were). */
function checkSuspensionDates(fields: Values, sent: Values): void {
  const start = fields.SuspensionStartDate;
  const end = fields.SuspensionEndDate;
  const field = 'SuspensionEndDate' in sent ? 'SuspensionEndDate' : 'SuspensionStartDate' in sent ? 'SuspensionStartDate' : null;
  if (field && typeof start === 'string' && typeof end === 'string' && end < start)
    throw invalidField(field, `SuspensionEndDate ${end} is before SuspensionStartDate ${start}.`);
}

/**
 * A new registration (spec 2.2): active as of today unless ActiveDate/IsActive say otherwise;
 * registered inactive, InactiveDate defaults to today; registered suspended, the suspension
 * starts today unless SuspensionStartDate says otherwise.
 */
export function validateCreate(body: Values, today: string): Values {
  const sent = normaliseFields(VOLUNTEER_FIELDS, body, VOLUNTEER_READ_ONLY);
  if (sent.FkConstituent === undefined) throw missingField('FkConstituent', 'FkConstituent is required: the id of the constituent to register as a volunteer.');
  const fields: Values = { IsActive: true, IsSuspended: false, ...sent };
  if (fields.IsActive) fields.ActiveDate ??= today;
  else fields.InactiveDate ??= today;
  if (fields.IsSuspended) fields.SuspensionStartDate ??= today;
  checkSuspensionDates(fields, sent);
  return fields;
}

export function decideCreate(cmd: { id: number; body: Values; today: string }, state: VolunteerState): VolunteerEvent[] {
  if (state.exists) throw new Error(`volunteer ${cmd.id} already exists`);
  return [{ type: 'VolunteerCreated', data: { id: cmd.id, fields: validateCreate(cmd.body, cmd.today) } }];
}

/**
 * Only sent fields change. Status moves become their own log entries (spec 3, decisions.md 6):
 * deactivating defaults InactiveDate to today, suspending defaults SuspensionStartDate to today;
 * the reverse moves (not shown in the spec) default ActiveDate and SuspensionEndDate to today.
 * A PATCH that changes nothing records nothing.
 */
export function decideUpdate(cmd: UpdateVolunteer, state: VolunteerState): VolunteerEvent[] {
  if ('FkConstituent' in cmd.body)
    throw invalidField('FkConstituent', 'FkConstituent cannot change after registration; register the other constituent as a volunteer instead.');
  const sent = normaliseFields(VOLUNTEER_FIELDS, cmd.body, VOLUNTEER_READ_ONLY);
  assertWritable(state, cmd.team, 'volunteer', cmd.id);
  const { id, today } = cmd;
  const cur = state.fields;
  let next = { ...cur, ...sent };
  const wasSuspended = cur.IsSuspended === true;
  const willBeSuspended = next.IsSuspended === true;
  // A new suspension starts afresh: today unless sent, and no end unless sent (an earlier
  // suspension's end is not this one's).
  if (!wasSuspended && willBeSuspended)
    next = { ...next, SuspensionStartDate: sent.SuspensionStartDate ?? today, SuspensionEndDate: sent.SuspensionEndDate ?? null };
  checkSuspensionDates(next, sent);
  const status: VolunteerEvent[] = [];
  const handled = new Set<string>();
  const wasActive = cur.IsActive !== false;
  const willBeActive = next.IsActive !== false;
  if (wasActive && !willBeActive) {
    status.push({ type: 'VolunteerDeactivated', data: { id, InactiveDate: sent.InactiveDate ?? today } });
    handled.add('IsActive').add('InactiveDate');
  } else if (!wasActive && willBeActive) {
    status.push({ type: 'VolunteerReactivated', data: { id, ActiveDate: sent.ActiveDate ?? today } });
    handled.add('IsActive').add('ActiveDate');
  }
  if (!wasSuspended && willBeSuspended) {
    status.push({ type: 'VolunteerSuspended', data: { id, SuspensionStartDate: next.SuspensionStartDate, SuspensionEndDate: next.SuspensionEndDate } });
    handled.add('IsSuspended').add('SuspensionStartDate').add('SuspensionEndDate');
  } else if (wasSuspended && !willBeSuspended) {
    status.push({ type: 'VolunteerSuspensionLifted', data: { id, SuspensionEndDate: sent.SuspensionEndDate ?? today } });
    handled.add('IsSuspended').add('SuspensionEndDate');
  }
  const rest = Object.fromEntries(Object.entries(sent).filter(([k]) => !handled.has(k)));
  const changes = changedFields(cur, rest);
  const events: VolunteerEvent[] = Object.keys(changes).length ? [{ type: 'VolunteerUpdated', data: { id, changes } }] : [];
  return [...events, ...status];
}

