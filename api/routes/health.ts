import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../../runtime/services.js';

export const healthRoutes =
  (services: Services): FastifyPluginAsync =>
  async (app) => {
    app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
    app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
      const r = await readiness(services);
      return reply.code(r.code).send(r.body);
    });
  };

/**
 * decisions.md §1: ready once the stores answer and every follower has caught up after start.
 * Lag under load leaves a caught-up follower caught up; reconnecting or failed is not ready.
 */
export async function readiness(services: Pick<Services, 'reachable' | 'followers' | 'starting'>) {
  const [reachable, followers] = await Promise.all([
    services.reachable().then(
      () => true,
      () => false,
    ),
    services.followers().catch(() => []),
  ]);
  // A part still starting (the webhook dispatcher waits for the read models) is not listed yet.
  const ready = reachable && !services.starting?.() && followers.every((f) => f.state === 'caught_up');
  return { code: ready ? 200 : 503, body: { status: ready ? 'ready' : 'not_ready', followers } };
}
