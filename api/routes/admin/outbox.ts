import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type NotificationDoc, outboxQuery } from '../../../projections/outbox.js';
import { TeamParams } from '../../schemas/admin.js';
import { errors, Nullable } from '../../schemas/common.js';
import type { Services } from '../../../runtime/services.js';

const NullableString = Type.Union([Type.String(), Type.Null()]);
const Notification = Type.Object({
  id: Type.String(),
  kind: Type.String({ description: 'signup_confirmation, task_reminder or endpoint_disabled (to the team\'s alertEmail)' }),
  taskId: Nullable(Type.Integer({ description: 'null on endpoint_disabled' })),
  volunteerId: Nullable(Type.Integer({ description: 'null on endpoint_disabled' })),
  endpointId: Nullable(Type.Integer({ description: 'The disabled webhook endpoint; null on the other kinds' })),
  to: NullableString,
  sendAt: Type.String({ description: 'UTC date-time' }),
  status: Type.String({ description: 'pending, sending, sent, canceled, failed or skipped (no email address)' }),
  attempts: Type.Integer(),
  sentAt: NullableString,
  error: NullableString,
});

/** The team's notification outbox (decisions.md 8 and 9), soonest first. */
export const adminOutboxRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/teams/:teamId/outbox',
      { schema: { hide: true, params: TeamParams, response: { 200: Type.Object({ notifications: Type.Array(Notification) }), ...errors(401, 404) } } },
      async (request) => {
        const r = await services.store.find<NotificationDoc>(outboxQuery(request.params.teamId));
        return { notifications: r.items.map(({ _dueAt, _queued, _constituent, FkTeam, ...n }) => ({ ...n, endpointId: n.endpointId ?? null })) };
      },
    );
  };
