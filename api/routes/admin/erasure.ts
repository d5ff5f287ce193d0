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

const Pending = Type.Object({
  erasures: Type.Array(
    Type.Object({
      PkConstituent: Type.Integer(),
      teamId: Type.Integer(),
      state: Type.Union([Type.Literal('waiting'), Type.Literal('running'), Type.Literal('retrying')]),
      fromPreviousRun: Type.Boolean(),
      attempts: Type.Integer({ description: 'Attempts that failed' }),
      lastError: Type.Union([Type.String(), Type.Null()], { description: 'The last failure, without personal values' }),
      lastStep: Type.String({ description: 'The last step finished; the next attempt starts after it' }),
      startedAt: Type.String(),
      nextAttemptAt: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
});

/**
 * decisions.md §17: the right to be forgotten. The answer comes once no personal value the
 * constituent ever held remains in any store (runtime/erasure.ts); again on an erased record it
 * is the same answer. `Idempotency-Key` as §11, scoped to the team as the other admin writes.
 */
export const erasureRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    // Not resumable: an erasure run again is answered the same by its journal (runtime/erasure.ts).
    useTeamIdempotency(app, services.idempotency);
    app.post(
      `/teams/:teamId/${RESOURCES.constituent.path}/:id/erase`,
      {
        schema: {
          hide: true,
          summary: 'Erase a constituent: every personal value it ever held, everywhere; it then reads as deleted',
          params: TeamRecordParams,
          body: EraseBody,
          response: { 200: Erased, ...errors(400, 401, 404, 409, 422, 501, 503) },
        },
      },
      // An erasure journaled and not finished answers 503 with its Retry-After (ErasurePending, api/errors.ts).
      async (request) => {
        const { teamId, id } = request.params;
        return { erased: await services.erasure.erase(adminContext(request, teamId), id, request.body?.reason ?? null) };
      },
    );
    // The operator's view of what /readyz only counts: unfinished erasures, their attempts and last error.
    app.get(
      '/erasures',
      { schema: { hide: true, summary: 'Erasures journaled and not finished yet, oldest first', response: { 200: Pending, ...errors(401) } } },
      async () => ({ erasures: services.erasure.pending() }),
    );
  };
