import { volunteerStream } from '../../domain/volunteer/events.js';
import { RESOURCES } from '../../domain/resources.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { readTeamRecord, readTeamRecordTagged } from '../../projections/read.js';
import { registerVolunteer, updateVolunteer } from '../../commands/volunteers.js';
import type { Values } from '../../domain/shared/fields.js';
import { publicView } from '../../projections/store/port.js';
import { VOLUNTEERS, volunteerSearch } from '../../projections/volunteers.js';
import { apiContext } from '../auth.js';
import { guardedContext, readTagged, tagged } from '../etag.js';
import { API_ERRORS, API_WRITE_ERRORS, errors, IdParams, pageOf } from '../schemas/common.js';
import * as S from '../schemas/volunteer.js';
import type { Services } from '../../runtime/services.js';
import { pointRead } from '../point-in-time.js';
import { OneAsOf, PointQuery } from '../schemas/history.js';

export const readVolunteer = (services: Services, team: number, id: number) => readTeamRecord(services.store, VOLUNTEERS, 'volunteer', team, id);
export const readVolunteerTagged = (services: Services, team: number, id: number) => readTeamRecordTagged(services.store, VOLUNTEERS, 'volunteer', team, id);

export const volunteerRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addSchema(S.Volunteer);
    const tags = ['Volunteers'];

    app.post(
      `/${RESOURCES.volunteer.path}`,
      {
        schema: {
          tags,
          summary: 'Register a constituent as a volunteer; an existing registration answers 200 with created: false',
          body: S.CreateVolunteerBody,
          response: { 201: S.VolunteerCreated, 200: S.VolunteerCreated, ...errors(...API_WRITE_ERRORS) },
        },
      },
      async (request, reply) => {
        const ctx = apiContext(request);
        const r = await registerVolunteer(services, ctx, request.body);
        // Deleted since with its constituent: the volunteer as the registration wrote it (commands/volunteers.ts).
        const read = r.record ? { record: r.record, revision: 1 } : await readVolunteerTagged(services, ctx.team, r.id);
        return reply.code(r.created ? 201 : 200).send({ created: r.created, volunteer: await tagged(services, reply, volunteerStream(r.id), read) });
      },
    );

    app.patch(
      `/${RESOURCES.volunteer.path}/:id`,
      {
        schema: {
          tags,
          summary: 'Update status, suspension and flags; only sent fields change',
          params: IdParams,
          body: S.UpdateVolunteerBody,
          response: { 200: S.VolunteerOne, ...errors(...API_WRITE_ERRORS) },
        },
      },
      async (request, reply) => {
        const stream = volunteerStream(request.params.id);
        const ctx = guardedContext(apiContext(request), request, stream);
        await updateVolunteer(services, ctx, request.params.id, request.body);
        return { volunteer: await tagged(services, reply, stream, await readVolunteerTagged(services, ctx.team, request.params.id)) };
      },
    );

    app.get(
      `/${RESOURCES.volunteer.path}/:id`,
      { schema: { tags, summary: 'One volunteer, now or as it stood (asOf, revision)', params: IdParams, querystring: PointQuery, response: { 200: OneAsOf('volunteer', S.VolunteerRef), ...errors(...API_ERRORS) } } },
      async (request, reply) => {
        const team = apiContext(request).team;
        const point = await pointRead(services, 'volunteer', team, request.params.id, request.query);
        if (point) return point;
        return readTagged(services, request, reply, volunteerStream(request.params.id), 'volunteer', () => readVolunteerTagged(services, team, request.params.id));
      },
    );

    app.get(
      `/${RESOURCES.volunteer.path}`,
      {
        schema: {
          tags,
          summary: 'Look up by email, or search by name or email, optionally active or inactive',
          querystring: S.VolunteerListQuery,
          response: { 200: S.VolunteerList, ...errors(...API_ERRORS) },
        },
      },
      async (request) => {
        const page = pageOf(request.query);
        const r = await services.store.find<Values>(volunteerSearch(apiContext(request).team, request.query, page));
        return { volunteers: r.items.map(publicView), ...page, total: r.total };
      },
    );
  };
