import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { RESOURCES } from '../../domain/resources.js';
import type { Services } from '../../runtime/services.js';
import { apiContext } from '../auth.js';
import { historyPage } from '../point-in-time.js';
import { API_ERRORS, errors, IdParams, pageOf } from '../schemas/common.js';
import { HistoryPage, HistoryQuery } from '../schemas/history.js';

/** The resources with a public history, by their path (domain/resources.ts), with their OpenAPI tag and words. */
const HISTORIES = [
  [RESOURCES.constituent.path, 'Constituents', 'a constituent', 'getConstituentHistory'],
  [RESOURCES.volunteer.path, 'Volunteers', 'a volunteer', 'getVolunteerHistory'],
  [RESOURCES.volunteerTask.path, 'Volunteer tasks', 'a task', 'getVolunteerTaskHistory'],
  [RESOURCES.event.path, 'Events', 'an event', 'getEventHistory'],
] as const;

/** decisions.md §10: a record's history, one entry per write, readable after its deletion. */
export const historyRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const [path, tag, what, operationId] of HISTORIES) {
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
