import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { createTeam, issueApiKey, revokeApiKey, updateTeam } from '../../../commands/teams.js';
import { notFound } from '../../../domain/shared/errors.js';
import { activityQuery } from '../../../projections/activity.js';
import { eq, publicView } from '../../../projections/store/port.js';
import { API_KEYS, type ApiKeyDoc, TEAMS, type TeamDoc } from '../../../projections/teams.js';
import { adminContext } from '../../auth.js';
import * as A from '../../schemas/admin.js';
import { Body, errors, NoBody, pageOf } from '../../schemas/common.js';
import type { Services } from '../../../runtime/services.js';

const hide = true;

export const teamRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/teams',
      { schema: { hide, body: A.CreateTeamBody, response: { 201: Type.Object({ team: A.Team }), ...errors(400, 401) } } },
      async (request, reply) => {
        const { now, correlationId } = adminContext(request, 0);
        const id = await createTeam(services, { source: 'Application', keyName: null, correlationId, now }, request.body);
        return reply.code(201).send({ team: (await services.store.get<TeamDoc>(TEAMS, id))! });
      },
    );

    app.get('/teams', { schema: { hide, response: { 200: Type.Object({ teams: Type.Array(A.Team) }), ...errors(401) } } }, async () => {
      const r = await services.store.find<TeamDoc>({ collection: TEAMS, sort: [{ field: 'id', dir: 'asc' }] });
      return { teams: r.items };
    });

    app.patch(
      '/teams/:teamId',
      { schema: { hide, params: A.TeamParams, body: A.UpdateTeamBody, response: { 200: Type.Object({ team: A.Team }), ...errors(400, 401, 404) } } },
      async (request) => {
        await updateTeam(services, adminContext(request, request.params.teamId), request.body);
        return { team: (await services.store.get<TeamDoc>(TEAMS, request.params.teamId))! };
      },
    );

    app.post(
      '/teams/:teamId/api-keys',
      {
        schema: {
          hide,
          params: A.TeamParams,
          body: Body({ name: Type.String({ minLength: 1, maxLength: 100 }), scope: Type.Union([Type.Literal('read_write'), Type.Literal('read_only')]) }),
          response: { 201: Type.Object({ apiKey: A.ApiKey, key: Type.String() }), ...errors(400, 401, 404) },
        },
      },
      async (request, reply) => {
        const ctx = adminContext(request, request.params.teamId);
        const { keyId, key } = await issueApiKey(services, ctx, request.body);
        const doc = await services.store.get<ApiKeyDoc>(API_KEYS, keyId);
        // The key's only showing: it is not stored, only its hash.
        return reply.code(201).send({ apiKey: publicView(doc!), key });
      },
    );

    app.get(
      '/teams/:teamId/api-keys',
      { schema: { hide, params: A.TeamParams, response: { 200: Type.Object({ apiKeys: Type.Array(A.ApiKey) }), ...errors(401, 404) } } },
      async (request) => {
        const r = await services.store.find<ApiKeyDoc>({ collection: API_KEYS, filter: eq('FkTeam', request.params.teamId), sort: [{ field: 'id', dir: 'asc' }] });
        return { apiKeys: r.items.map(publicView) };
      },
    );

    app.delete(
      '/teams/:teamId/api-keys/:keyId',
      {
        schema: {
          hide,
          params: Type.Object({ teamId: Type.Integer({ minimum: 1 }), keyId: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
          body: NoBody,
          response: { 200: Type.Object({ apiKey: A.ApiKey }), ...errors(400, 401, 404) },
        },
      },
      async (request) => {
        const { teamId, keyId } = request.params;
        const key = await services.store.get<ApiKeyDoc>(API_KEYS, keyId);
        if (!key || key.FkTeam !== teamId) throw notFound('API key', keyId);
        await revokeApiKey(services, adminContext(request, teamId), keyId);
        return { apiKey: publicView((await services.store.get<ApiKeyDoc>(API_KEYS, keyId))!) };
      },
    );

    app.get(
      '/teams/:teamId/activity',
      { schema: { hide, params: A.TeamParams, querystring: A.ActivityQuery, response: { 200: Type.Object({ activity: Type.Array(A.Activity), page: Type.Integer(), pageSize: Type.Integer(), total: Type.Integer() }), ...errors(400, 401, 404) } } },
      async (request) => {
        const page = pageOf(request.query);
        const { keyName, source } = request.query;
        const r = await services.store.find(activityQuery(request.params.teamId, page, { keyName, source }));
        return { activity: r.items as never[], ...page, total: r.total };
      },
    );
  };
