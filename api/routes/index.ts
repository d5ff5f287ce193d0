import type { FastifyPluginAsync } from 'fastify';
import { apiKeyHook } from '../auth.js';
import type { Services } from '../services.js';
import { constituentRoutes } from './constituents.js';
import { lookupRoutes } from './lookups.js';

/** Everything under /api/v1: one key check, one rate limit, one scope rule for every resource. */
export const publicRoutes =
  (services: Services): FastifyPluginAsync =>
  async (app) => {
    app.addHook('onRequest', apiKeyHook(services, services.limiter));
    await app.register(constituentRoutes(services));
    await app.register(lookupRoutes(services));
  };
