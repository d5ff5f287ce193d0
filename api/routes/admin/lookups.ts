import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { addLookup } from '../../../commands/lookups.js';
import { LOOKUP_LISTS } from '../../../domain/lookup/events.js';
import { adminContext } from '../../auth.js';
import { Body, errors } from '../../schemas/common.js';
import type { Services } from '../../../runtime/services.js';

const Params = Type.Object(
  { teamId: Type.Integer({ minimum: 1 }), list: Type.Union(LOOKUP_LISTS.map((l) => Type.Literal(l))) },
  { additionalProperties: false },
);

export const adminLookupRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/teams/:teamId/lookups/:list',
      { schema: { hide: true, params: Params, body: Body({ name: Type.String() }), response: { 201: Type.Object({ id: Type.Integer(), name: Type.String() }), ...errors(400, 401, 404) } } },
      async (request, reply) => {
        const { teamId, list } = request.params;
        const id = await addLookup(services, adminContext(request, teamId), list, request.body.name);
        return reply.code(201).send({ id, name: request.body.name.trim() });
      },
    );
  };
