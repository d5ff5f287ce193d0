import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { recordKind } from '../../../commands/records.js';
import { isErasedEvent } from '../../../domain/constituent/events.js';
import { streamOf } from '../../../domain/resources.js';
import { notFound } from '../../../domain/shared/errors.js';
import { revisionsOf } from '../../../domain/shared/revision.js';
import { HistoryEvent } from '../../schemas/admin.js';
import { errors } from '../../schemas/common.js';
import type { Services } from '../../../runtime/services.js';

const Params = Type.Object(
  { teamId: Type.Integer({ minimum: 1 }), resource: Type.String(), id: Type.Integer({ minimum: 1 }) },
  { additionalProperties: false },
);

/** A record's history: its stream, as analysts replaying the log see it. */
export const historyRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/teams/:teamId/history/:resource/:id',
      { schema: { hide: true, params: Params, response: { 200: Type.Object({ events: Type.Array(HistoryEvent) }), ...errors(401, 404) } } },
      async (request) => {
        const { teamId, resource, id } = request.params;
        const kind = recordKind(resource);
        if (!kind) throw notFound('resource type', resource);
        const events = await services.log.readStream(streamOf(kind, id));
        if (!events.length || events[0].metadata.team !== teamId) throw notFound(kind.what, id);
        const revisions = revisionsOf(events);
        // decisions.md §17: an erased constituent's entries keep their shape, each saying so.
        const erased = events.some(isErasedEvent);
        return {
          events: events.map((e, i) => {
            const entry = {
              position: Number(e.position.prepare),
              revision: revisions[i],
              type: e.type,
              at: e.metadata.at,
              source: e.metadata.source,
              keyName: e.metadata.keyName,
              data: e.data,
            };
            return erased ? { ...entry, erased: true as const } : entry;
          }),
        };
      },
    );
  };
