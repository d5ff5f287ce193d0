import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { healthRoutes } from '../../api/routes/health.js';
import type { FollowerStatus } from '../../eventlog/follower.js';
import type { Services } from '../../runtime/services.js';
import { startDispatcher } from '../../runtime/webhooks.js';
import { startTestApp } from '../support/app.js';

async function readyz(followers: FollowerStatus[], reachable = async () => {}) {
  const app = Fastify();
  await app.register(healthRoutes({ reachable, followers: async () => followers } as unknown as Services));
  const r = await app.inject({ method: 'GET', url: '/readyz' });
  await app.close();
  return { status: r.statusCode, body: r.json() };
}

const follower = (state: FollowerStatus['state'], behind: number | null = 0): FollowerStatus => ({ name: 'read-models', state, behind });

describe('GET /readyz (decisions.md §1)', () => {
  it('is ready when every follower has caught up, however far the log has run ahead since', async () => {
    const followers = [follower('caught_up', 1200), { name: 'webhook-dispatcher', state: 'caught_up' as const, behind: null }];
    expect(await readyz(followers)).toEqual({ status: 200, body: { status: 'ready', followers } });
  });

  it('is not ready while a follower catches up, reconnects or has failed', async () => {
    for (const state of ['catching_up', 'reconnecting', 'failed'] as const) {
      const followers = [follower(state), { name: 'webhook-dispatcher', state: 'caught_up' as const, behind: 0 }];
      expect(await readyz(followers)).toEqual({ status: 503, body: { status: 'not_ready', followers } });
    }
  });

  it('is not ready while a store does not answer', async () => {
    const r = await readyz([follower('caught_up')], async () => {
      throw new Error('no log');
    });
    expect(r).toEqual({ status: 503, body: { status: 'not_ready', followers: [follower('caught_up')] } });
  });
});

describe('the followers a process reports', () => {
  const started = startTestApp();
  afterAll(async () => (await started).close());

  it('are the projection runner and the webhook dispatcher, each with the events it is behind', async () => {
    const t = await started;
    await startDispatcher(t.runtime.services.config, t.runtime, { report: () => undefined });
    await t.team();
    await expect
      .poll(async () => (await t.app.inject({ method: 'GET', url: '/readyz' })).json())
      .toEqual({
        status: 'ready',
        followers: [
          { name: 'read-models', state: 'caught_up', behind: 0 },
          { name: 'webhook-dispatcher', state: 'caught_up', behind: 0 },
        ],
      });
  });
});
