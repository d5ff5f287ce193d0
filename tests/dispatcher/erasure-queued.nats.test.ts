import { describe, expect, it } from 'vitest';
import { natsAvailable } from './nats-server.js';
import { fastWebhooks, type Receiver, until, useWebhookApp, type WebhookApp } from './support.js';

/**
 * decisions.md §17 on NATS JetStream, whose queued bodies cannot be rewritten in place: a retry
 * queued with the person's values before an erasure goes out after it built again from the log
 * as the erasure left it (the erasure records its position in the queue's KV bucket).
 */
describe.skipIf(!natsAvailable)('a retry waiting in NATS JetStream through an erasure', () => {
  let t: WebhookApp;
  let rx: Receiver;
  useWebhookApp(
    (app, receiver) => {
      t = app;
      rx = receiver;
    },
    { nats: true, webhook: fastWebhooks({ retryBaseMs: 500, retryMaxMs: 500, maxAttempts: 20 }) },
  );

  it("is sent without the person's values once the erasure has answered", async () => {
    const team = await t.team();
    let erased = false;
    // Refused until the erasure has answered: every attempt before it fails, so the retry waiting
    // in a delay tier holds the body as first queued, with the values.
    rx.behave('/retry', () => ({ status: erased ? 200 : 500 }));
    await team.admin.post('/webhook-endpoints', { url: rx.url('/retry'), events: ['constituent.created'] });
    const id = (await team.api.Integration.post('/constituents', { FirstName: 'MkRetryFirst', Email1: 'mkretry@example.org' })).body.constituent.PkConstituent as number;
    const first = await until(() => rx.on('/retry')[0], 15_000, 'the first attempt');
    expect(first.raw).toContain('MkRetryFirst');
    expect((await t.admin.post(`/teams/${team.id}/constituents/${id}/erase`, {})).status).toBe(200);
    // An attempt already on its way when the erasure answered arrives a moment later: the ones
    // that began after it are those looked at.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const attemptsBefore = rx.on('/retry').length;
    erased = true;
    const after = await until(() => rx.on('/retry').slice(attemptsBefore)[0], 15_000, 'a retry after the erasure');
    for (const d of rx.on('/retry').slice(attemptsBefore)) {
      expect(d.raw).not.toContain('MkRetry');
      expect(d.raw.toLowerCase()).not.toContain('mkretry@example.org');
    }
    expect(JSON.parse(after.raw)).toMatchObject({ id: JSON.parse(first.raw).id, data: { PkConstituent: id, FirstName: null } });
  }, 60_000);
});
