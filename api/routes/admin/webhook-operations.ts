import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { notFound } from '../../../domain/shared/errors.js';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../../../projections/webhook-endpoints.js';
import * as S from '../../schemas/webhook.js';
import { errors, NoBody } from '../../schemas/common.js';
import type { Services } from '../../../runtime/services.js';

const hide = true;

/** The operations on one webhook endpoint (decisions.md §12): test, resend, replay, stats. */
export const webhookOperationRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    const ops = services.webhooks;
    const endpointOf = async (team: number, id: number) => {
      const doc = await services.store.get<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS, id);
      if (!doc || doc.FkTeam !== team || doc._deleted) throw notFound('webhook endpoint', id);
    };

    app.post(
      '/teams/:teamId/webhook-endpoints/:id/test',
      { schema: { hide, params: S.EndpointParams, body: NoBody, response: { 200: Type.Object({ delivery: S.Delivery }), ...errors(400, 401, 404) } } },
      async (request) => {
        const { teamId, id } = request.params;
        await endpointOf(teamId, id);
        return { delivery: await ops.test(teamId, id) };
      },
    );

    app.post(
      '/teams/:teamId/webhook-endpoints/:id/deliveries/:deliveryId/resend',
      { schema: { hide, params: S.DeliveryParams, body: NoBody, response: { 202: Type.Object({ delivery: S.Delivery }), ...errors(400, 401, 404) } } },
      async (request, reply) => {
        const { teamId, id, deliveryId } = request.params;
        await endpointOf(teamId, id);
        return reply.code(202).send({ delivery: await ops.resend(teamId, id, deliveryId) });
      },
    );

    app.post(
      '/teams/:teamId/webhook-endpoints/:id/replay',
      { schema: { hide, params: S.EndpointParams, body: S.ReplayBody, response: { 202: Type.Object({ replay: S.Replay }), ...errors(400, 401, 404) } } },
      async (request, reply) => {
        const { teamId, id } = request.params;
        await endpointOf(teamId, id);
        return reply.code(202).send({ replay: await ops.replay(teamId, id, request.body ?? {}) });
      },
    );

    app.get(
      '/teams/:teamId/webhook-endpoints/:id/replays/:replayId',
      { schema: { hide, params: S.ReplayParams, response: { 200: Type.Object({ replay: S.Replay }), ...errors(401, 404) } } },
      async (request) => {
        const { teamId, id, replayId } = request.params;
        await endpointOf(teamId, id);
        return { replay: await ops.replayOf(id, replayId) };
      },
    );

    app.get(
      '/teams/:teamId/webhook-endpoints/:id/stats',
      { schema: { hide, params: S.EndpointParams, querystring: S.StatsQuery, response: { 200: Type.Object({ hours: Type.Array(S.HourStats) }), ...errors(400, 401, 404) } } },
      async (request) => {
        const { teamId, id } = request.params;
        await endpointOf(teamId, id);
        return { hours: await ops.stats(id, request.query.hours ?? 24) };
      },
    );
  };
