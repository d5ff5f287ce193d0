import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { RESOURCES } from '../../../domain/resources.js';
import { TeamRecordParams } from '../../schemas/admin.js';
import { setEventGeography } from '../../../commands/events.js';
import { adminContext } from '../../auth.js';
import { errors } from '../../schemas/common.js';
import * as S from '../../schemas/event.js';
import type { Services } from '../../../runtime/services.js';
import { readEvent } from '../events.js';


/** The event's read-only geography, set by the application (decisions.md 9). */
export const adminEventRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addSchema(S.Event);
    app.patch(
      `/teams/:teamId/${RESOURCES.event.path}/:id`,
      { schema: { hide: true, params: TeamRecordParams, body: S.EventGeographyBody, response: { 200: S.EventOne, ...errors(400, 401, 403, 404) } } },
      async (request) => {
        const { teamId, id } = request.params;
        await setEventGeography(services, adminContext(request, teamId), id, request.body);
        return { event: await readEvent(services.store, teamId, id) };
      },
    );
  };
