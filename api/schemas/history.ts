import { type TSchema, Type } from '@sinclair/typebox';
import { Paging, Query } from './common.js';

export const HistoryQuery = Query({ ...Paging });

const Change = Type.Object({ from: Type.Unknown(), to: Type.Unknown() }, { description: 'The field\u2019s value before and after the write; `from` is null on creation' });

export const HistoryEntry = Type.Object({
  revision: Type.Integer({ minimum: 1, description: 'The record\u2019s revision after this write, from 1' }),
  type: Type.String({ description: 'The catalog type of this kind of change: a person-event\u2019s own type, else <resource>.created, .updated or .deleted' }),
  at: Type.String({ format: 'date-time' }),
  source: Type.String({ enum: ['Public API', 'Application'] }),
  keyName: Type.Union([Type.String(), Type.Null()]),
  changes: Type.Record(Type.String(), Change, { description: 'Every public field the write changed' }),
  erased: Type.Optional(Type.Literal(true, { description: 'On every entry of an erased constituent: its personal fields read null (decisions.md \u00a717)' })),
});

export const HistoryPage = Type.Object(
  { history: Type.Array(HistoryEntry), page: Type.Integer(), pageSize: Type.Integer(), total: Type.Integer() },
  { description: 'A page of the record\u2019s writes, oldest first: `{history, page, pageSize, total}`; a deleted record\u2019s ends with its deletion.' },
);

/** `asOf` and `revision` on single reads (decisions.md §10); at most one of them. */
export const PointQuery = Query({
  asOf: Type.Optional(Type.String({ description: 'Read the record as it stood at this date-time (UTC without an offset)' })),
  revision: Type.Optional(Type.Integer({ minimum: 1, description: 'Read the record right after this revision' })),
});

/** A single read's answer; `revision` is there when the read was asOf or revision. */
export const OneAsOf = <K extends string>(key: K, item: TSchema) =>
  Type.Object(
    {
      [key]: item,
      revision: Type.Optional(Type.Integer({ description: 'The record\u2019s revision as read (asOf or revision reads)' })),
      erased: Type.Optional(Type.Literal(true, { description: 'The constituent was erased since: its personal fields read null' })),
    },
    { description: 'The record; with `asOf` or `revision`, as it stood then, with `revision` (404 before its creation or after its deletion).' },
  );
