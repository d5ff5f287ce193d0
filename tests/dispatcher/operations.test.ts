import { operationCases } from './operations-cases.js';
import { type Receiver, useWebhookApp, type WebhookApp } from './support.js';

let t: WebhookApp;
let rx: Receiver;
useWebhookApp((app, receiver) => {
  t = app;
  rx = receiver;
});

// The embedded stack: SQLite queue, delivery log and replay jobs.
operationCases(() => ({ t, rx }));
