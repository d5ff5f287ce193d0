import type { Evolver } from '../domain/shared/events.js';
import { type RecordedEvent, unknownEvent } from '../domain/shared/events.js';
import { CONSTITUENT_FIELDS } from '../domain/constituent/rules.js';
import { constituentEvolver, constituentStream } from '../domain/constituent/events.js';
import { DONATION_PUBLIC } from '../domain/donation/rules.js';
import { EVENT_READ_FIELDS } from '../domain/event/creation.js';
import { type LookupEvent, lookupStream } from '../domain/lookup/events.js';
import { RECURRING_GIFT_PUBLIC } from '../domain/recurring-gift/decide.js';
import type { Values } from '../domain/shared/fields.js';
import type { RecordState } from '../domain/shared/record.js';
import { utcSecondsOf } from '../domain/shared/values.js';
import { taskGroupEvolver, taskGroupStream } from '../domain/task-group/events.js';
import { taskVolunteerFields } from '../domain/volunteer-task/linked.js';
import { numberOfHours, TASK_FIELDS } from '../domain/volunteer-task/rules.js';
import { VOLUNTEER_FIELDS, volunteerLinkedFields } from '../domain/volunteer/rules.js';
import { volunteerEvolver, volunteerStream } from '../domain/volunteer/events.js';
import type { Stamp } from './event-types.js';
import type { AsOf } from './history.js';

/**
 * The `data` of each webhook type: the record with the API's field names (spec 6.3), every
 * public field present (null when unset), its id, FkTeam and DateCreated; updates add
 * DateLastModified, deletes DeletedUtc.
 */
export const utc = (iso: string | null) => (iso ? utcSecondsOf(iso) : null);

type Build = (id: number, team: number, fields: Values) => Values;
const builders = new WeakMap<readonly string[], { idField: string; build: Build }>();

/**
 * The data's first keys (the id, FkTeam, then every field, null when unset) as one object
 * literal, compiled once per field list. Built key by key, an object of 25 or more keys turned
 * into a dictionary in V8: the change feed's thread builds and stringifies one for every change,
 * and the literal is built about ten times faster and stringified three times faster. The keys
 * are the domain's field names, each quoted as a JSON string.
 */
function builderOf(idField: string, fields: readonly string[]): Build {
  const known = builders.get(fields);
  if (known?.idField === idField) return known.build;
  const listed = new Set(fields);
  const keys = [...new Set([idField, 'FkTeam', ...fields])];
  if (keys.includes('__proto__')) throw new Error('a payload field may not be named __proto__');
  const value = (k: string) => (listed.has(k) ? `f[${JSON.stringify(k)}] ?? null` : k === idField ? 'id' : 'team');
  const build = new Function('id', 'team', 'f', `return { ${keys.map((k) => `${JSON.stringify(k)}: ${value(k)}`).join(', ')} };`) as Build;
  builders.set(fields, { idField, build });
  return build;
}

export function recordData(idField: string, s: RecordState, fields: readonly string[], event: RecordedEvent, stamp: Stamp, extra: Values = {}): Values {
  const out = builderOf(idField, fields)(s.id, s.team, s.fields);
  Object.assign(out, extra, { DateCreated: utc(s.createdAt) });
  if (stamp === 'updated') out.DateLastModified = utc(event.metadata.at);
  if (stamp === 'deleted') out.DeletedUtc = utc(event.metadata.at);
  return out;
}

const FIELD_LISTS = {
  constituent: Object.keys(CONSTITUENT_FIELDS),
  volunteer: ['FkConstituent', ...Object.keys(VOLUNTEER_FIELDS).filter((f) => f !== 'FkConstituent')],
  task: Object.keys(TASK_FIELDS),
  event: EVENT_READ_FIELDS,
  donation: DONATION_PUBLIC,
  recurringGift: RECURRING_GIFT_PUBLIC,
};

/** A team's lookup names by `list:id`. */
const lookupNamesEvolver: Evolver<Map<string, string>, LookupEvent> = {
  initial: () => new Map(),
  evolve(m, e) {
    switch (e.type) {
      case 'LookupAdded':
        return new Map(m).set(`${e.data.list}:${e.data.id}`, e.data.name);
      default:
        return unknownEvent(e.type, m);
    }
  },
};

/** A team's lookup names by list and id, as of the event. */
async function lookupNames(h: AsOf, team: number): Promise<(list: string, id: unknown) => string | null> {
  const names = await h.state(lookupStream(team), lookupNamesEvolver);
  return (list, id) => (id == null ? null : (names.get(`${list}:${id}`) ?? null));
}

const stateOf = <S>(h: AsOf, stream: string, evolver: Evolver<S>) => h.state(stream, evolver);

export async function constituentOf(h: AsOf, id: unknown): Promise<RecordState | null> {
  if (typeof id !== 'number') return null;
  const s = await stateOf(h, constituentStream(id), constituentEvolver);
  return s.exists ? s : null;
}

export const constituentData = (s: RecordState, e: RecordedEvent, stamp: Stamp) => recordData('PkConstituent', s, FIELD_LISTS.constituent, e, stamp);

/** decisions.md §17: the erasure names the record and when, nothing of the person. */
export const erasedData = (s: RecordState, e: RecordedEvent): Values => ({ PkConstituent: s.id, FkTeam: s.team, ErasedUtc: utc(e.metadata.at) });

export async function volunteerData(h: AsOf, s: RecordState, e: RecordedEvent, stamp: Stamp): Promise<Values> {
  const c = await constituentOf(h, s.fields.FkConstituent);
  return recordData('PkVolunteer', s, FIELD_LISTS.volunteer, e, stamp, volunteerLinkedFields(c?.fields));
}

/** The volunteer of a task and their constituent, as of the event (a deleted one still has its fields). */
export async function volunteerPerson(h: AsOf, volunteerId: unknown): Promise<RecordState | null> {
  if (typeof volunteerId !== 'number') return null;
  const v = await stateOf(h, volunteerStream(volunteerId), volunteerEvolver);
  return v.exists ? constituentOf(h, v.fields.FkConstituent) : null;
}

export async function taskData(h: AsOf, s: RecordState, e: RecordedEvent, stamp: Stamp): Promise<Values> {
  const person = await volunteerPerson(h, s.fields.FkVolunteer);
  const group = typeof s.fields.FkTaskGroup === 'number' ? await stateOf(h, taskGroupStream(s.fields.FkTaskGroup), taskGroupEvolver) : null;
  const name = await lookupNames(h, s.team);
  return recordData('PkTask', s, FIELD_LISTS.task, e, stamp, {
    NumberOfHours: numberOfHours(s.fields),
    FkDistrict: s.fields.FkDistrict ?? null,
    DistrictName: name('districts', s.fields.FkDistrict),
    FkPrecinct: s.fields.FkPrecinct ?? null,
    PrecinctName: name('precincts', s.fields.FkPrecinct),
    ...taskVolunteerFields(person?.fields),
    TaskGroupTitle: group?.exists ? (group.fields.TaskGroupTitle ?? null) : null,
  });
}

/** Spec 6.4: the shared shape of signed_up, canceled and unassigned. */
export async function taskPersonData(h: AsOf, task: RecordState, volunteerId: unknown, e: RecordedEvent): Promise<Values> {
  const c = await volunteerPerson(h, volunteerId);
  const groupId = task.fields.FkTaskGroup;
  const group = typeof groupId === 'number' ? await stateOf(h, taskGroupStream(groupId), taskGroupEvolver) : null;
  const name = await lookupNames(h, task.team);
  const g = group?.exists ? group.fields : null;
  const str = (v: unknown) => (v == null ? null : String(v));
  return {
    constituent: {
      PkConstituent: c ? String(c.id) : null,
      FirstName: str(c?.fields.FirstName),
      LastName: str(c?.fields.LastName),
      Email1: str(c?.fields.Email1),
      Phone1: str(c?.fields.Phone1),
    },
    task: {
      PkTask: task.id,
      TaskStartDateTime: task.fields.TaskStartDateTime ?? null,
      TaskEndDateTime: task.fields.TaskEndDateTime ?? null,
      VolunteerTaskTitle: task.fields.VolunteerTaskTitle ?? null,
      VolunteerTaskDescription: task.fields.VolunteerTaskDescription ?? null,
    },
    taskGroup: {
      PkTaskGroup: g ? String(groupId) : null,
      TaskGroupTitle: str(g?.TaskGroupTitle),
      GroupLocationName: str(g?.GroupLocationName),
      DistrictName: g ? name('districts', g.FkDistrict) : null,
      PrecinctName: g ? name('precincts', g.FkPrecinct) : null,
    },
    EventUtc: utc(e.metadata.at),
  };
}

export async function eventData(h: AsOf, s: RecordState, e: RecordedEvent, stamp: Stamp): Promise<Values> {
  const name = await lookupNames(h, s.team);
  return recordData('PkEvent', s, FIELD_LISTS.event, e, stamp, {
    DistrictName: name('districts', s.fields.FkDistrict),
    PrecinctName: name('precincts', s.fields.FkPrecinct),
  });
}

export const donationData = (s: RecordState, e: RecordedEvent, stamp: Stamp) => recordData('PkDonation', s, FIELD_LISTS.donation, e, stamp);

export const recurringGiftData = (s: RecordState & { canceledAt?: string | null }, e: RecordedEvent, stamp: Stamp) =>
  recordData('PkRecurringGift', s, FIELD_LISTS.recurringGift, e, stamp, { CanceledDate: s.canceledAt ? utc(s.canceledAt)!.slice(0, 10) : null });
