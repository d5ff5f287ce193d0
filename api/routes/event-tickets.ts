import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { RESOURCES, streamOf } from '../../domain/resources.js';
import { readTeamRecord } from '../../projections/read.js';
import type { Values } from '../../domain/shared/fields.js';
import { EVENT_TICKETS, ticketSearch } from '../../projections/event-tickets.js';
import { publicView, type ReadStore } from '../../projections/store/port.js';
import { apiContext } from '../auth.js';
import { readTagged } from '../etag.js';
import { API_ERRORS, errors, IdParams, pageOf } from '../schemas/common.js';
import * as S from '../schemas/event-ticket.js';
import type { Services } from '../../runtime/services.js';
import { dateParam } from './events.js';

export const readEventTicket = (store: ReadStore, team: number, id: number) => readTeamRecord(store, EVENT_TICKETS, 'event ticket sale', team, id);

/** Ticket sales are read-only here; the application records them (decisions.md 9). */
export const eventTicketRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addSchema(S.EventTicket);
    const tags = ['Event ticket sales'];

    app.get(
      `/${RESOURCES.eventTicket.path}/:id`,
      { schema: { tags, summary: 'One ticket sale', params: IdParams, response: { 200: S.EventTicketOne, ...errors(...API_ERRORS) } } },
      // Tagged with its stream's revision (decisions.md §11): a sale is written once, so the
      // log's revision is always the body's.
      async (request, reply) => {
        const id = request.params.id;
        return readTagged(services, request, reply, streamOf(RESOURCES.eventTicket, id), 'eventTicket', async () => ({ record: await readEventTicket(services.store, apiContext(request).team, id), revision: null }));
      },
    );

    app.get(
      `/${RESOURCES.eventTicket.path}`,
      {
        schema: {
          tags,
          summary: 'Ticket sales across all events or one; newest purchase first',
          querystring: S.EventTicketListQuery,
          response: { 200: S.EventTicketList, ...errors(...API_ERRORS) },
        },
      },
      async (request) => {
        const q = request.query;
        const page = pageOf(q);
        const filters = { ...q, purchasedFrom: dateParam('purchasedFrom', q.purchasedFrom), purchasedTo: dateParam('purchasedTo', q.purchasedTo) };
        const r = await services.store.find<Values>(ticketSearch(apiContext(request).team, filters, page));
        return { eventTickets: r.items.map(publicView), ...page, total: r.total };
      },
    );
  };
