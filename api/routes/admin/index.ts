import type { Static } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import { teamExists } from '../../../commands/teams.js';
import { notFound } from '../../../domain/shared/errors.js';
import { notFoundHandler } from '../../errors.js';
import { adminTokenHook, failedAuthGuard } from '../../auth.js';
import type { TeamParams } from '../../schemas/admin.js';
import type { Services } from '../../../runtime/services.js';
import { adminChangeRoutes } from './changes.js';
import { adminDonationRoutes } from './donations.js';
import { adminEventTicketRoutes } from './event-tickets.js';
import { erasureRoutes } from './erasure.js';
import { adminEventRoutes } from './events.js';
import { historyRoutes } from './history.js';
import { lockRoutes } from './locks.js';
import { adminLookupRoutes } from './lookups.js';
import { adminOutboxRoutes } from './outbox.js';
import { adminRecordRoutes } from './records.js';
import { adminTaskGroupRoutes } from './task-groups.js';
import { adminVolunteerTaskRoutes } from './volunteer-tasks.js';
import { teamRoutes } from './teams.js';
import { webhookEndpointRoutes } from './webhook-endpoints.js';
import { webhookOperationRoutes } from './webhook-operations.js';

/**
 * The application surface (decisions.md 9): what team admins, the public sign-up page and the
 * volunteer portal do in-app. One admin token; an unknown team is 404.
 */
export const adminRoutes =
  (services: Services): FastifyPluginAsync =>
  async (app) => {
    app.addHook('onRequest', adminTokenHook(services.config.adminToken!, failedAuthGuard(services.config.authFailuresPerMinute)));
    // Here, not at the root, so an unknown /admin/v1 path asks for the token first.
    app.setNotFoundHandler(notFoundHandler);
    // Every route under /teams/:teamId validates teamId (TeamParams) before this hook runs.
    app.addHook<{ Params: Partial<Static<typeof TeamParams>> }>('preHandler', async (request) => {
      const { teamId } = request.params;
      if (teamId !== undefined && !(await teamExists(services, teamId))) throw notFound('team', teamId);
    });
    await app.register(teamRoutes(services));
    await app.register(webhookEndpointRoutes(services));
    await app.register(webhookOperationRoutes(services));
    await app.register(adminDonationRoutes(services));
    await app.register(historyRoutes(services));
    await app.register(adminChangeRoutes(services));
    await app.register(lockRoutes(services));
    await app.register(adminLookupRoutes(services));
    await app.register(adminVolunteerTaskRoutes(services));
    await app.register(adminTaskGroupRoutes(services));
    await app.register(adminOutboxRoutes(services));
    await app.register(adminEventRoutes(services));
    await app.register(adminEventTicketRoutes(services));
    await app.register(adminRecordRoutes(services));
    await app.register(erasureRoutes(services));
  };
