import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../../runtime/services.js';

export const healthRoutes =
  (services: Services): FastifyPluginAsync =>
  async (app) => {
    app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
    app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
      const ready = await services.ready().catch(() => false);
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'starting' });
    });
  };
