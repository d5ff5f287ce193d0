import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

describe('a read-model projector thread that dies (embedded data dir)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-readyz-restart-'));
  const started = startTestApp({ dataDir: dir });
  afterAll(async () => {
    await (await started).close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes /readyz 503 reconnecting until its restarted thread has caught up, and loses no write made meanwhile', async () => {
    const t = await started;
    const api = (await t.team()).api.Integration;
    const readyz = async () => {
      const r = await t.app.inject({ method: 'GET', url: '/readyz' });
      return { status: r.statusCode, readModels: r.json().followers.find((f: FollowerStatus) => f.name === 'read-models') };
    };
    await expect.poll(readyz, { timeout: 15_000 }).toEqual({ status: 200, readModels: { name: 'read-models', state: 'caught_up', behind: 0 } });

    await t.runtime.readModels!.kill();
    // Asked at once: the restart waits its first back-off (100 ms) and the new thread's start.
    expect(await readyz()).toMatchObject({ status: 503, readModels: { state: 'reconnecting' } });
    const made = await api.post('/constituents', { FirstName: 'Written', LastName: 'Meanwhile' });
    expect(made.status).toBe(201);

    await expect.poll(readyz, { timeout: 15_000 }).toEqual({ status: 200, readModels: { name: 'read-models', state: 'caught_up', behind: 0 } });
    const id = made.body.constituent.PkConstituent;
    expect((await api.get(`/constituents/${id}`)).body.constituent.LastName).toBe('Meanwhile');
    expect((await api.get('/constituents?search=meanwhile')).body.total).toBe(1);
  });
});
