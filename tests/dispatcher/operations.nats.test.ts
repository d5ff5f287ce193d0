import { afterAll, beforeAll, describe } from 'vitest';
import { startDispatcher } from '../../runtime/webhooks.js';
import { startNats, type NatsServer } from '../support/nats.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { natsAvailable } from './nats-server.js';
import { operationCases } from './operations-cases.js';
import { fastWebhooks, type Receiver, startReceiver } from './support.js';

// The same operations with the delivery queue in NATS JetStream.
describe.skipIf(!natsAvailable)('webhook operations through NATS JetStream', () => {
  let nats: NatsServer;
  let t: TestApp;
  let rx: Receiver;
  beforeAll(async () => {
    nats = await startNats();
    t = await startTestApp({ natsUrl: nats.url, webhook: fastWebhooks() });
    await startDispatcher(t.runtime.services.config, t.runtime, { report: () => undefined });
    rx = await startReceiver();
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
    await nats?.stop();
  });
  operationCases(() => ({ t, rx }));
});
