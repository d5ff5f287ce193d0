import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { client, startTestApp } from '../support/app.js';
import { startDispatcher } from '../../runtime/webhooks.js';
import { fastWebhooks, startReceiver, until } from './support.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-wh-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function boot() {
  const t = await startTestApp({ dataDir: dir, webhook: fastWebhooks() });
  await startDispatcher(t.runtime.services.config, t.runtime, { report: () => undefined });
  return t;
}

describe('restarting the embedded product', () => {
  it('neither loses nor repeats deliveries, and keeps the delivery log', async () => {
    const rx = await startReceiver();
    let t = await boot();
    const team = await t.team();
    const ep = await team.admin.post('/webhook-endpoints', { url: rx.url('/r'), events: ['constituent.created'] });
    await team.api.Integration.post('/constituents', { FirstName: 'Before' });
    await rx.waitFor((r) => r.json?.data?.FirstName === 'Before');
    const epId = ep.body.webhookEndpoint.id;
    await until(async () => (await team.admin.get(`/webhook-endpoints/${epId}/deliveries?status=succeeded`)).body.total === 1);
    await t.close();

    t = await boot();
    const admin = client(t.app, `/admin/v1/teams/${team.id}`, 'test-admin-token');
    const api = client(t.app, '/api/v1', team.keys.Integration.key);
    await api.post('/constituents', { FirstName: 'After' });
    await rx.waitFor((r) => r.json?.data?.FirstName === 'After');
    const log = await until(async () => {
      const r = await admin.get(`/webhook-endpoints/${epId}/deliveries?status=succeeded`);
      return r.body.total === 2 && r.body;
    });
    expect(log.deliveries).toHaveLength(2);
    expect(rx.got.filter((r) => r.json?.data?.FirstName === 'Before')).toHaveLength(1);
    await t.close();
    await rx.close();
  });
});
