import { Type } from '@sinclair/typebox';
import { WEBHOOK_TYPES } from '../../domain/webhook-endpoint/types.js';
import { Query } from './common.js';

/** decisions.md §10: the change feed's parameters, the same on /api/v1 and the admin surface. */
export const ChangesQuery = Query({
  after: Type.Optional(Type.String({ description: 'The opaque cursor of a previous answer\u2019s `next`; absent: from the beginning; `now`: from the current end.' })),
  types: Type.Optional(Type.String({ description: 'A comma list of event types (`constituent.created`) or prefixes (`constituent.*`).' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: '1 to 1000; default 100' })),
  wait: Type.Optional(Type.Integer({ minimum: 0, maximum: 30, default: 0, description: 'Seconds (0 to 30) to wait for a first change when there is none yet; default 0' })),
});

export const Envelope = Type.Object(
  {
    id: Type.String({ description: 'The webhook envelope id, unique per change and type' }),
    type: Type.String({ enum: [...WEBHOOK_TYPES] }),
    created: Type.Integer({ description: 'Unix seconds of the change' }),
    team: Type.Integer(),
    version: Type.Integer({ description: 'The record\u2019s revision after this change' }),
    data: Type.Object({}, { additionalProperties: true, description: 'The webhook payload of this type' }),
  },
  { $id: 'ChangeEnvelope', description: 'Exactly the webhook envelope of the same change.' },
);

export const ChangesPage = Type.Object({
  changes: Type.Array(Type.Ref(Envelope)),
  next: Type.String({ description: 'The cursor to send as `after` to resume exactly after these changes' }),
  hasMore: Type.Boolean(),
}, { description: 'Up to `limit` changes after the cursor, oldest first: `{changes, next, hasMore}`. With nothing new and `wait`, answered as soon as a change is written, or after `wait` seconds with `changes: []` and `next` where the reader stands.' });

export const ExportQuery = Query({
  from: Type.Optional(Type.String({ description: 'A date-time (inclusive) or a cursor (exclusive)' })),
  to: Type.Optional(Type.String({ description: 'A date-time (inclusive) or a cursor (inclusive)' })),
  types: Type.Optional(Type.String({ description: 'A comma list of event types or prefixes' })),
});
