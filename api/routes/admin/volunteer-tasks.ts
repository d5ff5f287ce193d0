import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { RESOURCES } from '../../../domain/resources.js';
import { cancelTask, setTaskGeography, signUpForTask } from '../../../commands/volunteer-tasks.js';
import { adminContext } from '../../auth.js';
import { TeamRecordParams } from '../../schemas/admin.js';
import { errors } from '../../schemas/common.js';
import * as S from '../../schemas/volunteer-task.js';
import type { Services } from '../../../runtime/services.js';
import { readTask } from '../volunteer-tasks.js';

const ERRORS = errors(400, 401, 403, 404, 409);

/** The task's own geography, the public sign-up and the volunteer's own cancel (decisions.md 9). */
export const adminVolunteerTaskRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.patch(
      `/teams/:teamId/${RESOURCES.volunteerTask.path}/:id`,
      { schema: { hide: true, params: TeamRecordParams, body: S.GeographyBody, response: { 200: S.TaskOnePlain, ...ERRORS } } },
      async (request) => {
        const { teamId, id } = request.params;
        await setTaskGeography(services, adminContext(request, teamId), id, request.body);
        return { volunteerTask: await readTask(services, teamId, id) };
      },
    );
    app.post(
      `/teams/:teamId/${RESOURCES.volunteerTask.path}/:id/sign-up`,
      { schema: { hide: true, params: TeamRecordParams, body: S.SignUpBody, response: { 200: S.TaskOnePlain, ...ERRORS } } },
      async (request) => {
        const { teamId, id } = request.params;
        await signUpForTask(services, adminContext(request, teamId), id, request.body.FkVolunteer);
        return { volunteerTask: await readTask(services, teamId, id) };
      },
    );
    app.post(
      `/teams/:teamId/${RESOURCES.volunteerTask.path}/:id/cancel`,
      {
        schema: { hide: true, params: TeamRecordParams, body: S.CancelBody, response: { 200: S.TaskOnePlain, ...ERRORS } },
        // The cancel form may post no body at all; that is "whoever holds it".
        preValidation: async (request) => {
          if (request.body === undefined || request.body === null) request.body = {};
        },
      },
      async (request) => {
        const { teamId, id } = request.params;
        await cancelTask(services, adminContext(request, teamId), id, request.body?.FkVolunteer);
        return { volunteerTask: await readTask(services, teamId, id) };
      },
    );
  };
