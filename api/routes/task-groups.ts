import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { RESOURCES, streamOf } from '../../domain/resources.js';
import { readTeamRecord } from '../../projections/read.js';
import type { Values } from '../../domain/shared/fields.js';
import { publicView } from '../../projections/store/port.js';
import { TASK_GROUPS, taskGroupSearch } from '../../projections/task-groups.js';
import { apiContext } from '../auth.js';
import { readTagged } from '../etag.js';
import { API_ERRORS, errors, IdParams, pageOf } from '../schemas/common.js';
import * as S from '../schemas/task-group.js';
import type { Services } from '../../runtime/services.js';

export const readTaskGroup = (services: Services, team: number, id: number) => readTeamRecord(services.store, TASK_GROUPS, 'volunteer task group', team, id);

/** Task groups are read-only here (spec 2.4); the application creates them. */
export const taskGroupRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addSchema(S.TaskGroup);
    const tags = ['Volunteer task groups'];
    app.get(
      `/${RESOURCES.taskGroup.path}/:id`,
      { schema: { tags, summary: 'One task group', params: IdParams, response: { 200: S.TaskGroupOne, ...errors(...API_ERRORS) } } },
      // Tagged with its stream's revision (decisions.md §11): a task group is written once, so
      // the log's revision is always the body's.
      async (request, reply) => {
        const id = request.params.id;
        return readTagged(services, request, reply, streamOf(RESOURCES.taskGroup, id), 'volunteerTaskGroup', async () => ({ record: await readTaskGroup(services, apiContext(request).team, id), revision: null }));
      },
    );
    app.get(
      `/${RESOURCES.taskGroup.path}`,
      { schema: { tags, summary: 'Task groups, searched by title or location', querystring: S.TaskGroupListQuery, response: { 200: S.TaskGroupList, ...errors(...API_ERRORS) } } },
      async (request) => {
        const page = pageOf(request.query);
        const r = await services.store.find<Values>(taskGroupSearch(apiContext(request).team, request.query.search, page));
        return { volunteerTaskGroups: r.items.map(publicView), ...page, total: r.total };
      },
    );
  };
