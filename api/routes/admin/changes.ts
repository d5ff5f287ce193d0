import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../../runtime/services.js';
import { changeFeed, parseBound, rangeQuery, readChanges } from '../../change-feed.js';
import { TeamParams } from '../../schemas/admin.js';
import { ChangesPage, ChangesQuery, ExportQuery } from '../../schemas/changes.js';
import { errors } from '../../schemas/common.js';

/** decisions.md §9: a team's change feed and its export, read by the same feed reader. */
export const adminChangeRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/teams/:teamId/changes',
      { schema: { hide: true, params: TeamParams, querystring: ChangesQuery, response: { 200: ChangesPage, ...errors(400, 401, 404) } } },
      async (request) => readChanges(services, request.params.teamId, request.query),
    );

    app.get(
      '/teams/:teamId/export',
      { schema: { hide: true, params: TeamParams, querystring: ExportQuery, response: errors(400, 401, 404) } },
      async (request, reply) => {
        const { from, to, types } = request.query;
        // Every parameter is checked before the first byte, so a bad one is a 400, not a cut stream.
        const q = rangeQuery(from === undefined ? undefined : parseBound(from, 'from'), to === undefined ? undefined : parseBound(to, 'to'), types);
        const pages = changeFeed(services).pages(request.params.teamId, q);
        // Readable.from pulls the next page only when the socket has taken the last one (back-pressure).
        const lines = Readable.from(
          (async function* () {
            for await (const page of pages) yield page.map((e) => JSON.stringify(e)).join('\n') + '\n';
          })(),
        );
        return reply.type('application/x-ndjson').send(lines as never);
      },
    );
  };
