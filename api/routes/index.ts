import type { FastifyPluginAsync } from 'fastify';
import { apiKeyHook } from '../auth.js';
import type { Services } from '../../runtime/services.js';
import { constituentRoutes } from './constituents.js';
import { eventTicketRoutes } from './event-tickets.js';
import { eventRoutes } from './events.js';
import { lookupRoutes } from './lookups.js';
import { taskGroupRoutes } from './task-groups.js';
import { volunteerTaskRoutes } from './volunteer-tasks.js';
import { volunteerRoutes } from './volunteers.js';

/** Everything under /api/v1: one key check, one rate limit, one scope rule for every resource. */
export const publicRoutes =
  (services: Services): FastifyPluginAsync =>
  async (app) => {
    app.addHook('onRequest', apiKeyHook(services, services.limiter));
    await app.register(constituentRoutes(services));
    await app.register(lookupRoutes(services));
    await app.register(volunteerRoutes(services));
    await app.register(volunteerTaskRoutes(services));
    await app.register(taskGroupRoutes(services));
    await app.register(eventRoutes(services));
    await app.register(eventTicketRoutes(services));
  };
