import { type TObject, type TProperties, type TSchema, Type } from '@sinclair/typebox';
import { type DataShape, EVENT_TYPES, type EventType, type PayloadRecord, PING } from '../../dispatcher/event-types.js';
import { Nullable } from './common.js';
import { Constituent } from './constituent.js';
import { Donation, RecurringGift } from './donation.js';
import { Event } from './event.js';
import { TaskGroupPlain } from './task-group.js';
import { VolunteerTaskPlain } from './volunteer-task.js';
import { Volunteer } from './volunteer.js';

/**
 * The JSON Schema of each webhook type's `data` (decisions.md 12), generated from the catalog's
 * table (dispatcher/event-types.ts: which record, which stamp) and the records' own read schemas,
 * the ones the API answers with: a payload is the record with the API's field names (spec 6.3).
 * Strict (every field required, nothing else), so a payload that drifts from its record fails the
 * check every test run applies (tests/support/payload-check.ts).
 */
const RECORDS: Record<PayloadRecord, TObject> = {
  constituent: Constituent,
  volunteer: Volunteer,
  volunteer_task: VolunteerTaskPlain,
  donation: Donation,
  recurring_gift: RecurringGift,
  event: Event,
};

const strict = (properties: TProperties, description?: string) => Type.Object(properties, { additionalProperties: false, description });

const pick = (from: TObject, ...names: string[]): TProperties => Object.fromEntries(names.map((n) => [n, from.properties[n]]));

/** A record's data: its read fields, DateLastModified only on updates, DeletedUtc on deletes (spec 6.3). */
function recordData(record: PayloadRecord, stamp: 'created' | 'updated' | 'deleted'): TObject {
  const { DateLastModified, ...props } = RECORDS[record].properties;
  if (stamp === 'updated') return strict({ ...props, DateLastModified }, `The ${record} as it stands after the change.`);
  if (stamp === 'deleted') return strict({ ...props, DeletedUtc: Type.String({ description: 'UTC date-time of the deletion' }) }, `The ${record} as it was when deleted.`);
  return strict(props, `The ${record} as created.`);
}

const text = (description?: string) => Nullable(Type.String({ description }));

/** Spec 6.4: the shared shape of signed_up, canceled and unassigned; the task as it stands after the change. */
const TaskPerson = strict(
  {
    constituent: strict(
      { PkConstituent: text('The volunteer\u2019s constituent id, as a string'), ...pick(Constituent, 'FirstName', 'LastName', 'Email1', 'Phone1') },
      'The volunteer signed up, or (cancel, unassign) the one removed',
    ),
    task: strict({ PkTask: Type.Integer(), ...pick(VolunteerTaskPlain, 'TaskStartDateTime', 'TaskEndDateTime', 'VolunteerTaskTitle', 'VolunteerTaskDescription') }),
    taskGroup: strict({ PkTaskGroup: text('The group id, as a string; null for a task in no group'), ...pick(TaskGroupPlain, 'TaskGroupTitle', 'GroupLocationName', 'DistrictName', 'PrecinctName') }),
    EventUtc: Type.String({ description: 'UTC date-time of the change' }),
  },
  'Spec 6.4: the volunteer, the task and its group.',
);

const Erased = strict(
  {
    PkConstituent: Type.Integer({ minimum: 1 }),
    FkTeam: Type.Integer({ minimum: 1 }),
    ErasedUtc: Type.String({ description: 'UTC date-time of the erasure' }),
  },
  'The constituent erased; no personal field is sent, since none is kept.',
);

const Ping = strict({ endpointId: Type.Integer({ minimum: 1, description: 'The endpoint the test was sent to' }) }, 'A test delivery.');

function dataSchema(d: DataShape): TSchema {
  if ('record' in d) return recordData(d.record, d.stamp);
  if (d.shape === 'erased') return Erased;
  return d.shape === 'task_person' ? TaskPerson : Ping;
}

/** Plain JSON Schema (TypeBox's own marks dropped), as served and as Ajv compiles it. */
const plain = (s: TSchema): Record<string, unknown> => JSON.parse(JSON.stringify(s));

export interface EventTypeWithSchema {
  name: EventType['name'];
  description: string;
  schema: Record<string, unknown>;
}

/** The catalog with each type's data schema: the answer of GET /api/v1/webhook-event-types. */
export const EVENT_TYPES_WITH_SCHEMAS: readonly EventTypeWithSchema[] = EVENT_TYPES.map((t) => ({ name: t.name, description: t.description, schema: plain(dataSchema(t.data)) }));

export const EventTypesAnswer = Type.Object({
  eventTypes: Type.Array(
    Type.Object({
      name: Type.String({ description: 'The type, as in the envelope\u2019s `type` and X-Turnout-Event' }),
      description: Type.String(),
      schema: Type.Object({}, { additionalProperties: true, description: 'The JSON Schema (2020-12) of the envelope\u2019s `data`' }),
    }),
  ),
});

/** The whole envelope of one type, for the OpenAPI document's `webhooks` (decisions.md 7, 12). */
export function envelopeSchema(t: EventTypeWithSchema): Record<string, unknown> {
  const version = Type.Integer({ minimum: 1, description: 'The record\u2019s revision after this change: drop an update older than one you hold' });
  return plain(
    Type.Object(
      {
        id: Type.String({ description: '`evt_<number>_<unix seconds>`: the same on every attempt and in the change feed; also the webhook-id header' }),
        type: Type.Literal(t.name),
        created: Type.Integer({ description: 'Unix seconds of the change' }),
        team: Type.Integer({ description: 'The team the record belongs to' }),
        version: t.name === PING ? Type.Optional(version) : version,
        data: Type.Unsafe(t.schema),
        erased: Type.Optional(
          Type.Literal(true, { description: 'Present on the changes of an erased constituent (and its erasure): their personal fields read null (decisions.md §17)' }),
        ),
      },
      { additionalProperties: false },
    ),
  );
}
