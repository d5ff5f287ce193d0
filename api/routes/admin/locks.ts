import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { deleteRecord, lockRecord, recordKind } from '../../../commands/records.js';
import { streamOf } from '../../../domain/resources.js';
import { notFound } from '../../../domain/shared/errors.js';
import { guardedContext, setEtag } from '../../etag.js';
import { adminContext } from '../../auth.js';
import { errors, NoBody } from '../../schemas/common.js';
import type { Services } from '../../../runtime/services.js';

const Params = Type.Object(
  { teamId: Type.Integer({ minimum: 1 }), resource: Type.String(), id: Type.Integer({ minimum: 1 }) },
  { additionalProperties: false },
);
const Ok = Type.Object({ id: Type.Integer(), resource: Type.String(), locked: Type.Optional(Type.Boolean()), deleted: Type.Optional(Type.Boolean()) });

/** Locks (writes are then 403 record_protected, reads still work) and deletes of records. */
export const lockRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const action of ['lock', 'unlock'] as const) {
      app.post(
        `/teams/:teamId/:resource/:id/${action}`,
        { schema: { hide: true, params: Params, body: NoBody, response: { 200: Ok, ...errors(400, 401, 404) } } },
        async (request) => {
          const { teamId, resource, id } = request.params;
          const kind = recordKind(resource);
          if (!kind?.lockable) throw notFound('lockable resource', resource);
          await lockRecord(services, adminContext(request, teamId), kind, id, action === 'lock');
          return { id, resource, locked: action === 'lock' };
        },
      );
    }
    app.delete(
      '/teams/:teamId/:resource/:id',
      { schema: { hide: true, params: Params, body: NoBody, response: { 200: Ok, ...errors(400, 401, 403, 404, 412) } } },
      async (request, reply) => {
        const { teamId, resource, id } = request.params;
        const kind = recordKind(resource);
        if (!kind?.deletable) throw notFound('deletable resource', resource);
        const stream = streamOf(kind, id);
        const ctx = guardedContext(adminContext(request, teamId), request, stream);
        await deleteRecord(services, ctx, kind, id);
        await setEtag(services, reply, stream, ctx);
        return { id, resource, deleted: true };
      },
    );
  };
