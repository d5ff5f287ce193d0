import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDispatcher } from '../../runtime/webhooks.js';
import { startNats, type NatsServer } from '../support/nats.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { fastWebhooks, startReceiver, until, type Receiver } from './support.js';

let nats: NatsServer;
let t: TestApp;
let rx: Receiver;
beforeAll(async () => {
  nats = await startNats();
  t = await startTestApp({ natsUrl: nats.url, webhook: fastWebhooks() });
  rx = await startReceiver();
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
  await nats?.stop();
});

describe('several dispatchers on a shared queue', () => {
  it('lets one follow the log at a time, hands over when it stops, and delivers each webhook once', async () => {
    const config = t.runtime.services.config;
    const quiet = { report: () => undefined };
    const first = await startDispatcher(config, t.runtime, quiet);
    const second = await startDispatcher(config, t.runtime, quiet);
    expect([first.dispatcher !== null, second.dispatcher !== null]).toEqual([true, false]);

    const team = await t.team();
    expect((await team.admin.post('/webhook-endpoints', { url: rx.url('/one'), events: ['constituent.created'] })).status).toBe(201);
    await team.api.Integration.post('/constituents', { LastName: 'Before' });
    await until(() => rx.on('/one').length >= 1, 8000, 'the first delivery');

    await first.stop();
    await until(() => second.dispatcher !== null, 20_000, 'the standby to take the lease');
    await team.api.Integration.post('/constituents', { LastName: 'After' });
    await until(() => rx.on('/one').length >= 2, 8000, 'the second delivery');
    const names = rx.on('/one').map((r) => r.json.data.LastName);
    expect(names.sort()).toEqual(['After', 'Before']);
    await second.stop();
  }, 40_000);
});
