import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../runtime/services.js';
import { apiContext } from '../auth.js';
import { readChanges } from '../change-feed.js';
import { ChangesPage, ChangesQuery } from '../schemas/changes.js';
import { API_ERRORS, errors } from '../schemas/common.js';

/** decisions.md §10: the team's change feed; any key of the team may read it. */
export const changeRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/changes',
      {
        schema: {
          tags: ['Changes'],
          summary: 'The team\u2019s changes in log order: the webhook envelopes, from a cursor, waiting up to `wait` seconds for new ones',
          querystring: ChangesQuery,
          response: { 200: ChangesPage, ...errors(...API_ERRORS) },
        },
      },
      // The envelopes' JSON is written as it is, not serialized again (dispatcher/feed-table.ts).
      async (request, reply) =>
        reply.type('application/json').send((await readChanges(services, apiContext(request).team, request.query)) as never),
    );
  };
