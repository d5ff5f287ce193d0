import type { FastifyPluginAsync } from 'fastify';
import { apiKeyHook, failedAuthGuard } from '../auth.js';
import { notFoundHandler } from '../errors.js';
import { idempotencyHooks, resumableOf } from '../idempotency.js';
import type { Services } from '../../runtime/services.js';
import { apiContext } from '../auth.js';
import { batchRoutes } from './batch.js';
import { changeRoutes } from './changes.js';
import { constituentRoutes } from './constituents.js';
import { eventTicketRoutes } from './event-tickets.js';
import { eventRoutes } from './events.js';
import { historyRoutes } from './history.js';
import { lookupRoutes } from './lookups.js';
import { taskGroupRoutes } from './task-groups.js';
import { volunteerTaskRoutes } from './volunteer-tasks.js';
import { volunteerRoutes } from './volunteers.js';
import { webhookEventTypeRoutes } from './webhook-event-types.js';

/** Everything under /api/v1: one key check, one rate limit, one scope rule for every resource. */
export const publicRoutes =
  (services: Services): FastifyPluginAsync =>
  async (app) => {
    app.addHook('onRequest', apiKeyHook(services, services.limiter, failedAuthGuard(services.config.authFailuresPerMinute)));
    // After the key check (the key is the scope), before validation and the handler.
    // A single write's retry after its earlier try committed answers from that write (commands/resume.ts).
    const idempotency = idempotencyHooks(services.idempotency, (request) => `key:${request.apiKey!.id}`, resumableOf(services));
    app.addHook('preValidation', idempotency.preValidation);
    app.addHook('onSend', idempotency.onSend);
    app.addHook('onResponse', idempotency.onResponse);
    app.addHook('onClose', idempotency.onClose);
    // Here, not at the root, so an unknown /api/v1 path is authenticated and counted like any other.
    app.setNotFoundHandler(notFoundHandler);
    await app.register(constituentRoutes(services));
    await app.register(lookupRoutes(services));
    await app.register(volunteerRoutes(services));
    await app.register(volunteerTaskRoutes(services));
    await app.register(taskGroupRoutes(services));
    await app.register(eventRoutes(services));
    await app.register(eventTicketRoutes(services));
    await app.register(changeRoutes(services));
    await app.register(historyRoutes(services));
    await app.register(webhookEventTypeRoutes);
    await app.register(batchRoutes(services, { prefix: '', contextOf: apiContext, tags: true }));
  };
