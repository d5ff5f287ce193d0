import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../../runtime/services.js';

export const healthRoutes =
  (services: Services): FastifyPluginAsync =>
  async (app) => {
    app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
    // decisions.md §1: ready once the stores answer and every follower has caught up after start.
    // Lag under load leaves a caught-up follower caught up; reconnecting or failed is not ready.
    app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
      const [reachable, followers] = await Promise.all([
        services.reachable().then(
          () => true,
          () => false,
        ),
        services.followers().catch(() => []),
      ]);
      const ready = reachable && followers.every((f) => f.state === 'caught_up');
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', followers });
    });
  };
