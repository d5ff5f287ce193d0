import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type HistoryResource, RESOURCES } from '../../domain/resources.js';
import type { Services } from '../../runtime/services.js';
import { apiContext } from '../auth.js';
import { historyPage } from '../point-in-time.js';
import { API_ERRORS, errors, IdParams, pageOf } from '../schemas/common.js';
import { HistoryPage, HistoryQuery } from '../schemas/history.js';

/** How the OpenAPI document names each resource's history route; the compiler asks for every resource with a history. */
const DOCS: { [K in HistoryResource]: { tag: string; what: string; operationId: string } } = {
  constituent: { tag: 'Constituents', what: 'a constituent', operationId: 'getConstituentHistory' },
  volunteer: { tag: 'Volunteers', what: 'a volunteer', operationId: 'getVolunteerHistory' },
  volunteerTask: { tag: 'Volunteer tasks', what: 'a task', operationId: 'getVolunteerTaskHistory' },
  event: { tag: 'Events', what: 'an event', operationId: 'getEventHistory' },
};

/** decisions.md §10: a record's history, one entry per write, readable after its deletion. */
export const historyRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const name of Object.keys(DOCS) as HistoryResource[]) {
      const { path } = RESOURCES[name];
      const { tag, what, operationId } = DOCS[name];
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
        async (request) => historyPage(services, name, apiContext(request).team, request.params.id, pageOf(request.query)),
      );
    }
  };
