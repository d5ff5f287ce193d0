import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { createEndpoint, deleteEndpoint, rotateEndpointSecret, updateEndpoint } from '../../../commands/webhook-endpoints.js';
import { notFound } from '../../../domain/shared/errors.js';
import { deliveryView } from '../../../dispatcher/deliveries.js';
import { openSecret } from '../../../dispatcher/secrets.js';
import { endpointsOfTeam, WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../../../projections/webhook-endpoints.js';
import { publicView } from '../../../projections/store/port.js';
import { adminContext } from '../../auth.js';
import { TeamParams } from '../../schemas/admin.js';
import { errors, NoBody, pageOf } from '../../schemas/common.js';
import * as S from '../../schemas/webhook.js';
import type { Services } from '../../../runtime/services.js';

const hide = true;

/** Webhook endpoints of a team (decisions.md 9) and their delivery log. */
export const webhookEndpointRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    const read = async (team: number, id: number) => {
      const doc = await services.store.get<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS, id);
      if (!doc || doc.FkTeam !== team || doc._deleted) throw notFound('webhook endpoint', id);
      return doc;
    };
    const view = (d: WebhookEndpointDoc) => {
      const { FkTeam: _t, ...rest } = publicView(d);
      return rest;
    };

    app.post(
      '/teams/:teamId/webhook-endpoints',
      { schema: { hide, params: TeamParams, body: S.CreateEndpointBody, response: { 201: Type.Object({ webhookEndpoint: S.WebhookEndpoint, secret: Type.String() }), ...errors(400, 401, 404) } } },
      async (request, reply) => {
        const ctx = adminContext(request, request.params.teamId);
        const { id, secret } = await createEndpoint(services, ctx, request.body);
        return reply.code(201).send({ webhookEndpoint: view(await read(ctx.team, id)), secret });
      },
    );

    app.get(
      '/teams/:teamId/webhook-endpoints',
      { schema: { hide, params: TeamParams, response: { 200: Type.Object({ webhookEndpoints: Type.Array(S.WebhookEndpoint) }), ...errors(401, 404) } } },
      async (request) => {
        const r = await services.store.find<WebhookEndpointDoc>(endpointsOfTeam(request.params.teamId));
        return { webhookEndpoints: r.items.map(view) };
      },
    );

    app.get(
      '/teams/:teamId/webhook-endpoints/:id',
      { schema: { hide, params: S.EndpointParams, response: { 200: Type.Object({ webhookEndpoint: S.WebhookEndpoint, secret: Type.String() }), ...errors(401, 404) } } },
      async (request) => {
        const doc = await read(request.params.teamId, request.params.id);
        // Sealed at rest (decisions.md §17); a process with another main key fails here, logged
        // with the reason, rather than showing a secret that does not sign.
        return { webhookEndpoint: view(doc), secret: openSecret(services.mainSealer, doc.id, doc._secrets[0]) };
      },
    );

    app.patch(
      '/teams/:teamId/webhook-endpoints/:id',
      { schema: { hide, params: S.EndpointParams, body: S.UpdateEndpointBody, response: { 200: Type.Object({ webhookEndpoint: S.WebhookEndpoint }), ...errors(400, 401, 404) } } },
      async (request) => {
        const ctx = adminContext(request, request.params.teamId);
        await updateEndpoint(services, ctx, request.params.id, request.body);
        return { webhookEndpoint: view(await read(ctx.team, request.params.id)) };
      },
    );

    app.delete(
      '/teams/:teamId/webhook-endpoints/:id',
      { schema: { hide, params: S.EndpointParams, body: NoBody, response: { 200: Type.Object({ webhookEndpoint: S.WebhookEndpoint }), ...errors(400, 401, 404) } } },
      async (request) => {
        const ctx = adminContext(request, request.params.teamId);
        const before = await read(ctx.team, request.params.id);
        await deleteEndpoint(services, ctx, request.params.id);
        return { webhookEndpoint: { ...view(before), active: false } };
      },
    );

    app.post(
      '/teams/:teamId/webhook-endpoints/:id/rotate-secret',
      { schema: { hide, params: S.EndpointParams, body: S.RotateBody, response: { 200: Type.Object({ secret: Type.String() }), ...errors(400, 401, 404) } } },
      async (request) => {
        const ctx = adminContext(request, request.params.teamId);
        return { secret: await rotateEndpointSecret(services, ctx, request.params.id, request.body?.expiresInSeconds) };
      },
    );

    app.get(
      '/teams/:teamId/webhook-endpoints/:id/deliveries',
      {
        schema: {
          hide,
          params: S.EndpointParams,
          querystring: S.DeliveriesQuery,
          response: { 200: Type.Object({ deliveries: Type.Array(S.Delivery), page: Type.Integer(), pageSize: Type.Integer(), total: Type.Integer() }), ...errors(400, 401, 404) },
        },
      },
      async (request) => {
        await read(request.params.teamId, request.params.id);
        const page = pageOf(request.query);
        const r = await services.deliveries.list(request.params.id, request.query.status, page);
        return { deliveries: r.items.map(deliveryView), ...page, total: r.total };
      },
    );
  };
