import { constituentStream } from '../../../domain/constituent/events.js';
import { RESOURCES } from '../../../domain/resources.js';
import { eventStream } from '../../../domain/event/events.js';
import { volunteerStream } from '../../../domain/volunteer/events.js';
import { taskStream } from '../../../domain/volunteer-task/events.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createConstituent, upsertConstituentByEmail } from '../../../commands/constituents.js';
import { createEvent } from '../../../commands/events.js';
import { createTask } from '../../../commands/volunteer-tasks.js';
import { registerVolunteer } from '../../../commands/volunteers.js';
import { DomainError } from '../../../domain/shared/errors.js';
import type { Services } from '../../../runtime/services.js';
import { adminContext } from '../../auth.js';
import { tagged } from '../../etag.js';
import { resumableOf, useTeamIdempotency } from '../../idempotency.js';
import { TeamParams } from '../../schemas/admin.js';
import { errors } from '../../schemas/common.js';
import * as C from '../../schemas/constituent.js';
import * as E from '../../schemas/event.js';
import * as T from '../../schemas/volunteer-task.js';
import * as V from '../../schemas/volunteer.js';
import { batchRoutes } from '../batch.js';
import { readConstituentTagged } from '../constituents.js';
import { readEventTagged } from '../events.js';
import { readTaskTagged } from '../volunteer-tasks.js';
import { readVolunteerTagged } from '../volunteers.js';

const hide = true;
const ERRORS = errors(400, 401, 403, 404, 409, 413, 422);

/**
 * decisions.md §9: the application creates the four records with the public create body and
 * answer, under the admin token; activity says `Application`. `Idempotency-Key` works as on
 * /api/v1 (§11) but is scoped to the team, so `turnout import` can re-run a file safely.
 */
export const adminRecordRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    // A single create's retry after its earlier try committed answers from that write (commands/resume.ts).
    useTeamIdempotency(app, services.idempotency, resumableOf(services));
    for (const schema of [C.Constituent, V.Volunteer, T.VolunteerTask, E.Event]) app.addSchema(schema);
    // decisions.md §14: `turnout import` sends its rows through these.
    await app.register(batchRoutes(services, { prefix: '/teams/:teamId', contextOf: (request) => adminContext(request, (request.params as { teamId: number }).teamId), hide }));

    app.post(
      `/teams/:teamId/${RESOURCES.constituent.path}`,
      { schema: { hide, params: TeamParams, querystring: C.CreateQuery, body: C.ConstituentBody, response: { 201: C.ConstituentCreated, 200: C.ConstituentCreated, ...ERRORS } } },
      async (request, reply) => {
        const ctx = adminContext(request, request.params.teamId);
        const { mode, matchOn } = request.query;
        if ((mode === 'upsert') !== (matchOn === 'email'))
          throw new DomainError('invalid_field', 'Upsert needs both mode=upsert and matchOn=email.', mode ? 'matchOn' : 'mode');
        const r = mode === 'upsert' ? await upsertConstituentByEmail(services, ctx, request.body) : { id: await createConstituent(services, ctx, request.body), created: true };
        return reply.code(r.created ? 201 : 200).send({ created: r.created, constituent: await tagged(services, reply, constituentStream(r.id), await readConstituentTagged(services, ctx.team, r.id)) });
      },
    );

    app.post(
      `/teams/:teamId/${RESOURCES.volunteer.path}`,
      { schema: { hide, params: TeamParams, body: V.CreateVolunteerBody, response: { 201: V.VolunteerCreated, 200: V.VolunteerCreated, ...ERRORS } } },
      async (request, reply) => {
        const ctx = adminContext(request, request.params.teamId);
        const r = await registerVolunteer(services, ctx, request.body);
        // Deleted since with its constituent: the volunteer as the registration wrote it (commands/volunteers.ts).
        const read = r.record ? { record: r.record, revision: 1 } : await readVolunteerTagged(services, ctx.team, r.id);
        return reply.code(r.created ? 201 : 200).send({ created: r.created, volunteer: await tagged(services, reply, volunteerStream(r.id), read) });
      },
    );

    app.post(
      `/teams/:teamId/${RESOURCES.volunteerTask.path}`,
      { schema: { hide, params: TeamParams, body: T.CreateTaskBody, response: { 201: T.TaskCreated, ...ERRORS } } },
      async (request, reply) => {
        const ctx = adminContext(request, request.params.teamId);
        const id = await createTask(services, ctx, request.body);
        return reply.code(201).send({ created: true, volunteerTask: await tagged(services, reply, taskStream(id), await readTaskTagged(services, ctx.team, id)) });
      },
    );

    app.post(
      `/teams/:teamId/${RESOURCES.event.path}`,
      { schema: { hide, params: TeamParams, body: E.EventCreateBody, response: { 201: E.EventCreated, ...ERRORS } } },
      async (request, reply) => {
        const ctx = adminContext(request, request.params.teamId);
        const id = await createEvent(services, ctx, request.body);
        return reply.code(201).send({ created: true, event: await tagged(services, reply, eventStream(id), await readEventTagged(services.store, ctx.team, id)) });
      },
    );
  };
