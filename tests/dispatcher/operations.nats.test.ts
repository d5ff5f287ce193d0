import { describe } from 'vitest';
import { natsAvailable } from './nats-server.js';
import { operationCases } from './operations-cases.js';
import { type Receiver, useWebhookApp, type WebhookApp } from './support.js';

// The same operations with the delivery queue in NATS JetStream.
describe.skipIf(!natsAvailable)('webhook operations through NATS JetStream', () => {
  let t: WebhookApp;
  let rx: Receiver;
  useWebhookApp(
    (app, receiver) => {
      t = app;
      rx = receiver;
    },
    { nats: true },
  );
  operationCases(() => ({ t, rx }));
});
