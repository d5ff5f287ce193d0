import { Type } from '@sinclair/typebox';
import { Body, Paging } from './common.js';

/** Meta-resources of the application surface use camelCase keys (decisions.md 9). */
export const TeamParams = Type.Object({ teamId: Type.Integer({ minimum: 1 }) }, { additionalProperties: false });
export const TeamRecordParams = Type.Object({ teamId: Type.Integer({ minimum: 1 }), id: Type.Integer({ minimum: 1 }) }, { additionalProperties: false });

export const Team = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  alertEmail: Type.Union([Type.String(), Type.Null()], { description: 'Where operational alerts (an endpoint disabled) are emailed; null when unset' }),
  createdAt: Type.String(),
});

// alertEmail is checked by the domain, so its message names the field and says what is wanted.
export const CreateTeamBody = Body({ name: Type.String({ minLength: 1, maxLength: 150 }), alertEmail: Type.Optional(Type.Unknown({ description: 'An email address, or null' })) });
export const UpdateTeamBody = Body({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 150 })), alertEmail: Type.Optional(Type.Unknown({ description: 'An email address, or null' })) });

export const ApiKey = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  scope: Type.Union([Type.Literal('read_write'), Type.Literal('read_only')]),
  prefix: Type.String(),
  createdAt: Type.String(),
  revokedAt: Type.Union([Type.String(), Type.Null()]),
});

export const PagingQuery = Type.Object({ ...Paging }, { additionalProperties: false });

/** decisions.md §9: the activity log, paged, optionally one key's or one source's. */
export const ActivityQuery = Type.Object(
  {
    ...PagingQuery.properties,
    keyName: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: "Only this API key's changes (its name)" })),
    source: Type.Optional(Type.Union([Type.Literal('Public API'), Type.Literal('Application')], { description: 'Only changes through the public API or the application' })),
  },
  { additionalProperties: false },
);

export const Activity = Type.Object({
  at: Type.String(),
  source: Type.String(),
  keyName: Type.Union([Type.String(), Type.Null()]),
  action: Type.String(),
  recordType: Type.String(),
  recordId: Type.Integer(),
});

export const HistoryEvent = Type.Object({
  position: Type.Integer(),
  revision: Type.Integer(),
  type: Type.String(),
  at: Type.String(),
  source: Type.String(),
  keyName: Type.Union([Type.String(), Type.Null()]),
  data: Type.Object({}, { additionalProperties: true }),
  /** decisions.md §17: on every entry of an erased constituent, whose personal fields read null. */
  erased: Type.Optional(Type.Literal(true)),
});
