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
 * Followers whose outage leaves the API answering correctly (decisions.md §1 as amended): the
 * webhook dispatcher (its queue) and the shared rate limits. Taking every replica out of a load
 * balancer because webhooks wait would turn a delay into an outage, so these make /readyz
 * `degraded` (200), never not ready, once started.
 */
const BESIDE_THE_API = new Set(['webhook-dispatcher', 'rate-limits']);

/**
 * decisions.md §1: ready once the stores answer and every follower has caught up after start.
 * Lag under load leaves a caught-up follower caught up; a read-model follower reconnecting or
 * failed is not ready, one beside the API (above) only degraded.
 */
export async function readiness(services: Pick<Services, 'reachable' | 'followers' | 'starting'>) {
  const [reachable, listed] = await Promise.all([
    services.reachable().then(
      () => true,
      () => false,
    ),
    // Followers whose state cannot be read (the read models' thread not answering) are not known
    // to have caught up: not ready, rather than ready with none listed.
    services.followers().then(
      (followers) => ({ known: true, followers }),
      () => ({ known: false, followers: [] }),
    ),
  ]);
  const { known, followers } = listed;
  const outage = (f: { name: string; state: string }) => BESIDE_THE_API.has(f.name) && (f.state === 'reconnecting' || f.state === 'failed');
  // A part still starting (the webhook dispatcher waits for the read models) is not listed yet.
  const ready = reachable && known && !services.starting?.() && followers.every((f) => f.state === 'caught_up' || outage(f));
  const status = !ready ? 'not_ready' : followers.some(outage) ? 'degraded' : 'ready';
  return { code: ready ? 200 : 503, body: { status, followers } };
}
