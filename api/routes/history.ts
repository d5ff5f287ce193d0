import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../runtime/services.js';
import { apiContext } from '../auth.js';
import { historyPage } from '../point-in-time.js';
import { API_ERRORS, errors, IdParams, pageOf } from '../schemas/common.js';
import { HistoryPage, HistoryQuery } from '../schemas/history.js';

const RESOURCES = [
  ['constituents', 'Constituents', 'a constituent', 'getConstituentHistory'],
  ['volunteers', 'Volunteers', 'a volunteer', 'getVolunteerHistory'],
  ['volunteer-tasks', 'Volunteer tasks', 'a task', 'getVolunteerTaskHistory'],
  ['events', 'Events', 'an event', 'getEventHistory'],
] as const;

/** decisions.md §10: a record's history, one entry per write, readable after its deletion. */
export const historyRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const [path, tag, what, operationId] of RESOURCES) {
      app.get(
        `/${path}/:id/history`,
        {
          schema: {
            tags: [tag],
            operationId,
            summary: `The history of ${what}: one entry per write, oldest first, with the fields each changed`,
            params: IdParams,
            querystring: HistoryQuery,
            response: { 200: HistoryPage, ...errors(...API_ERRORS) },
          },
        },
        async (request) => historyPage(services, path, apiContext(request).team, request.params.id, pageOf(request.query)),
      );
    }
  };
