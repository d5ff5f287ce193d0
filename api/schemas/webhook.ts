import { Type } from '@sinclair/typebox';
import { Body, Nullable, Paging } from './common.js';

export const WebhookEndpoint = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  active: Type.Boolean(),
  description: Nullable(Type.String()),
  maxPerSecond: Nullable(Type.Integer({ description: 'At most this many requests are sent to it in any second; null for no limit' })),
  disabledAt: Nullable(Type.String({ description: 'When the dispatcher disabled it; null while active' })),
  disabledReason: Nullable(Type.String({ enum: ['gone', 'failing'], description: 'gone: it answered 410; failing: every attempt failed for TURNOUT_WEBHOOK_DISABLE_AFTER_HOURS' })),
  createdAt: Type.String(),
});

/** An endpoint of a team: the admin surface's record params. */
export { TeamRecordParams as EndpointParams } from './admin.js';

// Types are checked by the domain so that its messages (unknown event type, https only) name the field.
export const CreateEndpointBody = Body({
  url: Type.Unknown({ description: 'https:// address of the receiver' }),
  events: Type.Unknown({ description: 'Event types, or ["*"] for all (including types added later)' }),
  active: Type.Optional(Type.Unknown({ description: 'Default true' })),
  description: Type.Optional(Type.Unknown()),
  maxPerSecond: Type.Optional(Type.Unknown({ description: 'Requests per second at most, 1..1000, or null for no limit' })),
});
export const UpdateEndpointBody = Body({
  url: Type.Optional(Type.Unknown()),
  events: Type.Optional(Type.Unknown()),
  active: Type.Optional(Type.Unknown()),
  description: Type.Optional(Type.Unknown()),
  maxPerSecond: Type.Optional(Type.Unknown({ description: 'Requests per second at most, 1..1000, or null for no limit' })),
});
export const RotateBody = Type.Union([Body({ expiresInSeconds: Type.Optional(Type.Unknown({ description: 'Seconds the old secret keeps signing (default 0)' })) }), Type.Null()]);

export const Delivery = Type.Object({
  id: Type.String({ description: 'The attempt\'s X-Turnout-Delivery' }),
  eventId: Type.String(),
  eventType: Type.String(),
  attempt: Type.Integer(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('abandoned')]),
  responseStatus: Nullable(Type.Integer()),
  durationMs: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  attemptedAt: Nullable(Type.String()),
  nextAttemptAt: Nullable(Type.String()),
});

export const DeliveriesQuery = Type.Object(
  { status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('abandoned')])), ...Paging },
  { additionalProperties: false },
);

/** A delivery of the admin surface's operations (decisions.md §12). */
export const DeliveryParams = Type.Object(
  { teamId: Type.Integer({ minimum: 1 }), id: Type.Integer({ minimum: 1 }), deliveryId: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);
export const ReplayParams = Type.Object(
  { teamId: Type.Integer({ minimum: 1 }), id: Type.Integer({ minimum: 1 }), replayId: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);

// Checked by the operation, so a wrong one is invalid_field naming it.
export const ReplayBody = Body({
  from: Type.Optional(Type.Unknown({ description: 'Required. A date-time (inclusive) or a change-feed cursor (exclusive, like `after`)' })),
  to: Type.Optional(Type.Unknown({ description: 'A date-time or a change-feed cursor, both inclusive; absent: up to the end of the log' })),
  types: Type.Optional(Type.Unknown({ description: 'Catalog type names or prefixes such as "constituent.*"; absent: all the endpoint subscribes to' })),
});

export const Replay = Type.Object({
  id: Type.String(),
  status: Type.Union([Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')]),
  queued: Type.Integer({ description: 'Envelopes queued for the endpoint so far' }),
  sent: Type.Integer({ description: 'Of those, delivered' }),
  failed: Type.Integer({ description: 'Of those, given up on' }),
});

export const StatsQuery = Type.Object(
  { hours: Type.Optional(Type.Integer({ minimum: 1, maximum: 720, default: 24, description: '1 to 720; default 24' })) },
  { additionalProperties: false },
);
export const HourStats = Type.Object({
  hour: Type.String({ description: 'The start of the hour (UTC)' }),
  succeeded: Type.Integer(),
  failed: Type.Integer({ description: 'Attempts that got no 2xx (retried or given up)' }),
});
