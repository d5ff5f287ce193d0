import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { RESOURCES } from '../../../domain/resources.js';
import { createTaskGroup } from '../../../commands/task-groups.js';
import { adminContext } from '../../auth.js';
import { TeamParams } from '../../schemas/admin.js';
import { errors } from '../../schemas/common.js';
import * as S from '../../schemas/task-group.js';
import type { Services } from '../../../runtime/services.js';
import { readTaskGroup } from '../task-groups.js';

export const adminTaskGroupRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      `/teams/:teamId/${RESOURCES.taskGroup.path}`,
      { schema: { hide: true, params: TeamParams, body: S.CreateTaskGroupBody, response: { 201: S.TaskGroupCreatedPlain, ...errors(400, 401, 404) } } },
      async (request, reply) => {
        const { teamId } = request.params;
        const id = await createTaskGroup(services, adminContext(request, teamId), request.body);
        return reply.code(201).send({ volunteerTaskGroup: await readTaskGroup(services, teamId, id) });
      },
    );
  };
