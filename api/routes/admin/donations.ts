import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { RESOURCES, streamOf } from '../../../domain/resources.js';
import { readTeamRecord } from '../../../projections/read.js';
import { Type } from '@sinclair/typebox';
import { flagDonation, recordDonation, refundDonation, updateDonation } from '../../../commands/donations.js';
import { deleteRecord, recordKind } from '../../../commands/records.js';
import { cancelRecurringGift, startRecurringGift } from '../../../commands/recurring-gifts.js';
import { DONATIONS, RECURRING_GIFTS } from '../../../projections/donations.js';
import { adminContext } from '../../auth.js';
import { guardedContext, setEtag } from '../../etag.js';
import { TeamParams, TeamRecordParams } from '../../schemas/admin.js';
import * as S from '../../schemas/donation.js';
import { errors, NoBody } from '../../schemas/common.js';
import type { Services } from '../../../runtime/services.js';

const hide = true;

/** Donations and recurring gifts, recorded in-app (decisions.md 9); they reach integrators as webhooks. */
export const adminDonationRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    const read = async (collection: string, what: string, team: number, id: number) =>
      (await readTeamRecord(services.store, collection, what, team, id)) as never;
    const donation = (team: number, id: number) => read(DONATIONS, 'donation', team, id);
    const One = Type.Object({ donation: S.Donation });

    app.post(
      `/teams/:teamId/${RESOURCES.donation.path}`,
      { schema: { hide, params: TeamParams, body: S.DonationBody, response: { 201: One, ...errors(400, 401, 404) } } },
      async (request, reply) => {
        const ctx = adminContext(request, request.params.teamId);
        const id = await recordDonation(services, ctx, request.body);
        return reply.code(201).send({ donation: await donation(ctx.team, id) });
      },
    );

    app.patch(
      `/teams/:teamId/${RESOURCES.donation.path}/:id`,
      { schema: { hide, params: TeamRecordParams, body: S.DonationBody, response: { 200: One, ...errors(400, 401, 403, 404) } } },
      async (request) => {
        const ctx = adminContext(request, request.params.teamId);
        await updateDonation(services, ctx, request.params.id, request.body);
        return { donation: await donation(ctx.team, request.params.id) };
      },
    );

    app.delete(
      `/teams/:teamId/${RESOURCES.donation.path}/:id`,
      { schema: { hide, params: TeamRecordParams, body: NoBody, response: { 200: One, ...errors(400, 401, 403, 404) } } },
      async (request, reply) => {
        // If-Match guards an admin DELETE (decisions.md §11), as the other records' (locks.ts).
        const stream = streamOf(RESOURCES.donation, request.params.id);
        const ctx = guardedContext(adminContext(request, request.params.teamId), request, stream);
        const before = await donation(ctx.team, request.params.id);
        await deleteRecord(services, ctx, recordKind('donations')!, request.params.id);
        await setEtag(services, reply, stream, ctx);
        return { donation: before };
      },
    );

    app.post(
      `/teams/:teamId/${RESOURCES.donation.path}/:id/refund`,
      { schema: { hide, params: TeamRecordParams, body: S.RefundBody, response: { 201: One, ...errors(400, 401, 403, 404) } } },
      async (request, reply) => {
        const ctx = adminContext(request, request.params.teamId);
        const refundId = await refundDonation(services, ctx, request.params.id, request.body.Amount);
        return reply.code(201).send({ donation: await donation(ctx.team, refundId) });
      },
    );

    for (const [action, flag] of [['receipt', 'Receipted'], ['thank', 'Thanked']] as const) {
      app.post(
        `/teams/:teamId/donations/:id/${action}`,
        { schema: { hide, params: TeamRecordParams, body: NoBody, response: { 200: One, ...errors(400, 401, 403, 404) } } },
        async (request) => {
          const ctx = adminContext(request, request.params.teamId);
          await flagDonation(services, ctx, request.params.id, flag);
          return { donation: await donation(ctx.team, request.params.id) };
        },
      );
    }

    const Gift = Type.Object({ recurringGift: S.RecurringGift });
    app.post(
      `/teams/:teamId/${RESOURCES.recurringGift.path}`,
      { schema: { hide, params: TeamParams, body: S.RecurringGiftBody, response: { 201: Gift, ...errors(400, 401, 404) } } },
      async (request, reply) => {
        const ctx = adminContext(request, request.params.teamId);
        const id = await startRecurringGift(services, ctx, request.body);
        return reply.code(201).send({ recurringGift: await read(RECURRING_GIFTS, 'recurring gift', ctx.team, id) });
      },
    );

    app.delete(
      `/teams/:teamId/${RESOURCES.recurringGift.path}/:id`,
      { schema: { hide, params: TeamRecordParams, body: NoBody, response: { 200: Gift, ...errors(400, 401, 404) } } },
      async (request, reply) => {
        const stream = streamOf(RESOURCES.recurringGift, request.params.id);
        const ctx = guardedContext(adminContext(request, request.params.teamId), request, stream);
        await cancelRecurringGift(services, ctx, request.params.id);
        await setEtag(services, reply, stream, ctx);
        return { recurringGift: await read(RECURRING_GIFTS, 'recurring gift', ctx.team, request.params.id) };
      },
    );
  };
