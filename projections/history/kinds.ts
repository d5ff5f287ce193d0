import { CONSTITUENT_FIELDS } from '../../domain/constituent/rules.js';
import { EVENT_READ_FIELDS } from '../../domain/event/creation.js';
import { type HistoryResource, RESOURCES, type Resource } from '../../domain/resources.js';
import type { Evolver, RecordedEvent } from '../../domain/shared/events.js';
import type { Values } from '../../domain/shared/fields.js';
import type { RecordState } from '../../domain/shared/record.js';
import { ASSIGNED, UNASSIGNED } from '../../domain/volunteer-task/events.js';
import { taskVolunteerFields } from '../../domain/volunteer-task/linked.js';
import { numberOfHours, TASK_FIELDS, TASK_GEOGRAPHY_FIELDS } from '../../domain/volunteer-task/rules.js';
import { VOLUNTEER_FIELDS } from '../../domain/volunteer/rules.js';
import { CONSTITUENTS } from '../constituents.js';
import { geographyNames } from '../lookups.js';
import type { Doc, ReadStore } from '../store/port.js';
import { TASK_GROUPS } from '../task-groups.js';
import { linkedFields, VOLUNTEERS } from '../volunteers.js';

/**
 * The record resources with a public history and point-in-time reads (decisions.md §10), and
 * what each needs: its stream, its evolver, its own read fields (as the record's events set
 * them), and the names a read looks up from linked records (as they are now, §10).
 */
export interface HistoryKind extends Pick<Resource, 'path' | 'category' | 'key' | 'resource' | 'what' | 'idField'> {
  /** The record as its webhooks see it. */
  evolver: Evolver<RecordState>;
  /** The record's own read fields, from its state: what history diffs and an as-of read shows. */
  own: (s: RecordState) => Values;
  /** Names and contacts looked up from linked records (read models, now). */
  linked: (own: Values, team: number, store: ReadStore) => Promise<Values>;
  /** A person-event's own catalog type (a task's sign-up), or null. */
  personType?: (e: RecordedEvent) => string | null;
}

const pick = (s: RecordState, fields: readonly string[]): Values => Object.fromEntries(fields.map((f) => [f, s.fields[f] ?? null]));

const CONSTITUENT_OWN = Object.keys(CONSTITUENT_FIELDS);
const VOLUNTEER_OWN = Object.keys(VOLUNTEER_FIELDS);
const TASK_OWN = [...Object.keys(TASK_FIELDS), ...Object.keys(TASK_GEOGRAPHY_FIELDS)];
const EVENT_OWN = EVENT_READ_FIELDS.filter((f) => f !== 'DistrictName' && f !== 'PrecinctName');

const geography = async (own: Values, team: number, store: ReadStore) => geographyNames(store, { ...own, FkTeam: team });

/** What a task read shows of its volunteer and group (as projections/volunteer-tasks.ts derives it). */
async function taskLinked(own: Values, team: number, store: ReadStore): Promise<Values> {
  const v = typeof own.FkVolunteer === 'number' ? await store.get<Doc>(VOLUNTEERS, own.FkVolunteer) : null;
  const g = typeof own.FkTaskGroup === 'number' ? await store.get<Doc>(TASK_GROUPS, own.FkTaskGroup) : null;
  return {
    ...taskVolunteerFields(v),
    TaskGroupTitle: g?.TaskGroupTitle ?? null,
    ...(await geography(own, team, store)),
  };
}

function taskPersonType(e: RecordedEvent): string | null {
  if (e.type === ASSIGNED) return 'volunteer_task.signed_up';
  if (e.type === UNASSIGNED) return (e.data as { reason?: string }).reason === 'canceled' ? 'volunteer_task.canceled' : 'volunteer_task.unassigned';
  return null;
}

/** A resource's facts as history reads them: its record as its webhooks see it (domain/resources.ts). */
const facts = (r: Resource) => ({ path: r.path, category: r.category, key: r.key, resource: r.resource, what: r.what, idField: r.idField, evolver: r.asOfEvolver ?? r.evolver });

/** What history adds to each resource with a history; the compiler asks for every one. */
const READS: { [K in HistoryResource]: Pick<HistoryKind, 'own' | 'linked' | 'personType'> } = {
  constituent: { own: (s) => pick(s, CONSTITUENT_OWN), linked: async () => ({}) },
  volunteer: {
    own: (s) => pick(s, VOLUNTEER_OWN),
    linked: async (own, _team, store) => {
      const { _email1: _, ...names } = linkedFields(await store.get<Doc>(CONSTITUENTS, own.FkConstituent as number));
      return names;
    },
  },
  volunteerTask: {
    own: (s) => ({ ...pick(s, TASK_OWN), NumberOfHours: numberOfHours(s.fields) }),
    linked: taskLinked,
    personType: taskPersonType,
  },
  event: { own: (s) => pick(s, EVENT_OWN), linked: geography },
};

const KINDS = Object.fromEntries((Object.keys(READS) as HistoryResource[]).map((name) => [name, { ...facts(RESOURCES[name]), ...READS[name] }])) as Record<HistoryResource, HistoryKind>;

export const historyKind = (name: HistoryResource): HistoryKind => KINDS[name];
