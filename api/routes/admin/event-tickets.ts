import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { RESOURCES } from '../../../domain/resources.js';
import { TeamParams } from '../../schemas/admin.js';
import { recordTicketSale } from '../../../commands/event-tickets.js';
import { adminContext } from '../../auth.js';
import { errors } from '../../schemas/common.js';
import * as S from '../../schemas/event-ticket.js';
import type { Services } from '../../../runtime/services.js';
import { readEventTicket } from '../event-tickets.js';


/** A ticket sale as checkout or hand entry records it (decisions.md 9). */
export const adminEventTicketRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addSchema(S.EventTicket);
    app.post(
      `/teams/:teamId/${RESOURCES.eventTicket.path}`,
      { schema: { hide: true, params: TeamParams, body: S.EventTicketBody, response: { 201: S.EventTicketCreated, ...errors(400, 401, 404) } } },
      async (request, reply) => {
        const { teamId } = request.params;
        const id = await recordTicketSale(services, adminContext(request, teamId), request.body);
        return reply.code(201).send({ eventTicket: await readEventTicket(services.store, teamId, id) });
      },
    );
  };
