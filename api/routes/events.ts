import { eventStream } from '../../domain/event/events.js';
import { RESOURCES } from '../../domain/resources.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { readTeamRecord, readTeamRecordTagged } from '../../projections/read.js';
import { createEvent, updateEvent } from '../../commands/events.js';
import { invalidField } from '../../domain/shared/errors.js';
import type { Values } from '../../domain/shared/fields.js';
import { parseDate } from '../../domain/shared/values.js';
import { EVENTS, eventSearch } from '../../projections/events.js';
import { publicView, type ReadStore } from '../../projections/store/port.js';
import { apiContext } from '../auth.js';
import { guardedContext, readTagged, tagged } from '../etag.js';
import { API_ERRORS, API_WRITE_ERRORS, errors, IdParams, pageOf } from '../schemas/common.js';
import * as S from '../schemas/event.js';
import type { Services } from '../../runtime/services.js';
import { pointRead } from '../point-in-time.js';
import { OneAsOf, PointQuery } from '../schemas/history.js';

export const readEvent = (store: ReadStore, team: number, id: number) => readTeamRecord(store, EVENTS, 'event', team, id);
export const readEventTagged = (store: ReadStore, team: number, id: number) => readTeamRecordTagged(store, EVENTS, 'event', team, id);

/** A date query parameter: YYYY-MM-DD and real on the calendar, else invalid_field naming it. */
export function dateParam(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const d = parseDate(value);
  if (d === null) throw invalidField(name, `${name} must be a real calendar date in the form YYYY-MM-DD.`);
  return d;
}

export const eventRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addSchema(S.Event);
    const tags = ['Events'];

    app.post(
      `/${RESOURCES.event.path}`,
      {
        schema: {
          tags,
          summary: 'Create an event, as the in-app Add Event does',
          body: S.EventCreateBody,
          response: { 201: S.EventCreated, ...errors(...API_WRITE_ERRORS) },
        },
      },
      async (request, reply) => {
        const ctx = apiContext(request);
        const id = await createEvent(services, ctx, request.body);
        return reply.code(201).send({ created: true, event: await tagged(services, reply, eventStream(id), await readEventTagged(services.store, ctx.team, id)) });
      },
    );

    app.patch(
      `/${RESOURCES.event.path}/:id`,
      { schema: { tags, summary: 'Update an event; omitted fields are untouched', params: IdParams, body: S.EventPatchBody, response: { 200: S.EventOne, ...errors(...API_WRITE_ERRORS) } } },
      async (request, reply) => {
        const stream = eventStream(request.params.id);
        const ctx = guardedContext(apiContext(request), request, stream);
        await updateEvent(services, ctx, request.params.id, request.body);
        return { event: await tagged(services, reply, stream, await readEventTagged(services.store, ctx.team, request.params.id)) };
      },
    );

    app.get(
      `/${RESOURCES.event.path}/:id`,
      {
        schema: { tags, summary: 'One event with contact and location details, now or as it stood (asOf, revision)', params: IdParams, querystring: PointQuery, response: { 200: OneAsOf('event', S.EventRef), ...errors(...API_ERRORS) } },
      },
      async (request, reply) => {
        const team = apiContext(request).team;
        const point = await pointRead(services, 'event', team, request.params.id, request.query);
        if (point) return point;
        return readTagged(services, request, reply, eventStream(request.params.id), 'event', () => readEventTagged(services.store, team, request.params.id));
      },
    );

    app.get(
      `/${RESOURCES.event.path}`,
      { schema: { tags, summary: 'Search events; newest start date first', querystring: S.EventListQuery, response: { 200: S.EventList, ...errors(...API_ERRORS) } } },
      async (request) => {
        const q = request.query;
        const page = pageOf(q);
        const filters = { ...q, startDate: dateParam('startDate', q.startDate), endDate: dateParam('endDate', q.endDate) };
        const r = await services.store.find<Values>(eventSearch(apiContext(request).team, filters, page));
        return { events: r.items.map(publicView), ...page, total: r.total };
      },
    );
  };
