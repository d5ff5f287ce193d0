import { taskStream } from '../../domain/volunteer-task/events.js';
import { RESOURCES } from '../../domain/resources.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { readTeamRecord, readTeamRecordTagged } from '../../projections/read.js';
import { createTask, updateTask } from '../../commands/volunteer-tasks.js';
import type { Values } from '../../domain/shared/fields.js';
import { publicView } from '../../projections/store/port.js';
import { VOLUNTEER_TASKS, taskSearch } from '../../projections/volunteer-tasks.js';
import { apiContext } from '../auth.js';
import { guardedContext, readTagged, tagged } from '../etag.js';
import { API_ERRORS, API_WRITE_ERRORS, errors, IdParams, pageOf } from '../schemas/common.js';
import * as S from '../schemas/volunteer-task.js';
import type { Services } from '../../runtime/services.js';
import { pointRead } from '../point-in-time.js';
import { OneAsOf, PointQuery } from '../schemas/history.js';

export const readTask = (services: Services, team: number, id: number) => readTeamRecord(services.store, VOLUNTEER_TASKS, 'volunteer task', team, id);
export const readTaskTagged = (services: Services, team: number, id: number) => readTeamRecordTagged(services.store, VOLUNTEER_TASKS, 'volunteer task', team, id);

export const volunteerTaskRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addSchema(S.VolunteerTask);
    const tags = ['Volunteer tasks'];

    app.post(
      `/${RESOURCES.volunteerTask.path}`,
      {
        schema: {
          tags,
          summary: 'Create a task; with FkVolunteer it is created assigned',
          body: S.CreateTaskBody,
          response: { 201: S.TaskCreated, ...errors(...API_WRITE_ERRORS) },
        },
      },
      async (request, reply) => {
        const ctx = apiContext(request);
        const id = await createTask(services, ctx, request.body);
        return reply.code(201).send({ created: true, volunteerTask: await tagged(services, reply, taskStream(id), await readTaskTagged(services, ctx.team, id)) });
      },
    );

    app.patch(
      `/${RESOURCES.volunteerTask.path}/:id`,
      {
        schema: {
          tags,
          summary: 'Update a task, assign, reassign or unassign it; ifOpen=true claims it only while unassigned',
          description:
            '409 not_open: ifOpen=true and the task has a volunteer. 409 task_busy: FkVolunteer changed while another sign-up or assignment for the task was being saved; nothing changed, retry.',
          params: IdParams,
          querystring: S.PatchQuery,
          body: S.UpdateTaskBody,
          response: { 200: S.TaskOne, ...errors(...API_WRITE_ERRORS) },
        },
      },
      async (request, reply) => {
        const stream = taskStream(request.params.id);
        const ctx = guardedContext(apiContext(request), request, stream);
        await updateTask(services, ctx, request.params.id, request.body, request.query.ifOpen === true);
        return { volunteerTask: await tagged(services, reply, stream, await readTaskTagged(services, ctx.team, request.params.id)) };
      },
    );

    app.get(
      `/${RESOURCES.volunteerTask.path}/:id`,
      {
        schema: {
          tags,
          summary: 'One task with contact and location details, now or as it stood (asOf, revision)',
          params: IdParams,
          querystring: PointQuery,
          response: { 200: OneAsOf('volunteerTask', S.VolunteerTaskRef), ...errors(...API_ERRORS) },
        },
      },
      async (request, reply) => {
        const team = apiContext(request).team;
        const point = await pointRead(services, 'volunteerTask', team, request.params.id, request.query);
        if (point) return point;
        return readTagged(services, request, reply, taskStream(request.params.id), 'volunteerTask', () => readTaskTagged(services, team, request.params.id));
      },
    );

    app.get(
      `/${RESOURCES.volunteerTask.path}`,
      {
        schema: {
          tags,
          summary: 'Search tasks; totalHours covers the whole filtered set',
          querystring: S.TaskListQuery,
          response: { 200: S.TaskList, ...errors(...API_ERRORS) },
        },
      },
      async (request) => {
        const page = pageOf(request.query);
        const r = await services.store.find<Values>(taskSearch(apiContext(request).team, request.query, page));
        return { volunteerTasks: r.items.map(publicView), ...page, total: r.total, totalHours: r.sums.NumberOfHours ?? 0 };
      },
    );
  };
