import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { RESOURCES } from '../../../domain/resources.js';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../../runtime/services.js';
import { adminContext } from '../../auth.js';
import { useTeamIdempotency } from '../../idempotency.js';
import { TeamRecordParams } from '../../schemas/admin.js';
import { Body, errors } from '../../schemas/common.js';

const EraseBody = Type.Union([
  Body({ reason: Type.Optional(Type.Union([Type.String({ maxLength: 200, description: 'Why, for the audit (at most 200 characters); kept in the log' }), Type.Null()])) }),
  Type.Null(),
]);

const Erased = Type.Object({
  erased: Type.Object({
    PkConstituent: Type.Integer(),
    erasedAt: Type.String({ description: 'UTC date-time of the erasure (the first one, when repeated)' }),
  }),
});

/**
 * decisions.md §17: the right to be forgotten. The answer comes once no personal value the
 * constituent ever held remains in any store (runtime/erasure.ts); again on an erased record it
 * is the same answer. `Idempotency-Key` as §11, scoped to the team as the other admin writes.
 */
export const erasureRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    useTeamIdempotency(app, services.idempotency);
    app.post(
      `/teams/:teamId/${RESOURCES.constituent.path}/:id/erase`,
      {
        schema: {
          hide: true,
          summary: 'Erase a constituent: every personal value it ever held, everywhere; it then reads as deleted',
          params: TeamRecordParams,
          body: EraseBody,
          response: { 200: Erased, ...errors(400, 401, 404, 409, 422, 501) },
        },
      },
      async (request) => {
        const { teamId, id } = request.params;
        const erased = await services.erasure.erase(adminContext(request, teamId), id, request.body?.reason ?? null);
        return { erased };
      },
    );
  };
