import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
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
  let natsUrl: string;
  useWebhookApp(
    (app, receiver) => {
      t = app;
      rx = receiver;
      natsUrl = app.config.natsUrl ?? app.runtime.services.config.natsUrl!;
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

  it("leaves no body with the person's values in JetStream once an attempt after the erasure has run: the retry is queued with the body built again", async () => {
    // After the review of b547ec2: the retry republished the message as first queued.
    const team = await t.team();
    rx.behave('/failing', () => ({ status: 500 }));
    await team.admin.post('/webhook-endpoints', { url: rx.url('/failing'), events: ['constituent.created'] });
    const id = (await team.api.Integration.post('/constituents', { FirstName: 'MkRepubFirst', Email1: 'mkrepub@example.org' })).body.constituent.PkConstituent as number;
    await until(() => rx.on('/failing')[0], 15_000, 'the first attempt');
    expect((await t.admin.post(`/teams/${team.id}/constituents/${id}/erase`, {})).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = rx.on('/failing').length;
    await until(() => rx.on('/failing').slice(before)[1], 20_000, 'two attempts after the erasure');
    for (const d of rx.on('/failing').slice(before)) expect(d.raw).not.toContain('MkRepub');
    // What JetStream holds for the next attempt.
    const nc = await connect({ servers: natsUrl });
    try {
      const jsm = await jetstreamManager(nc);
      const held: string[] = [];
      for (const stream of ['TURNOUT_WEBHOOKS', 'TURNOUT_WEBHOOKS_DELAYED']) {
        const info = await jsm.streams.info(stream);
        for (let seq = info.state.first_seq; info.state.messages > 0 && seq <= info.state.last_seq; seq++) {
          const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
          if (m) held.push(new TextDecoder().decode(m.data));
        }
      }
      const mine = held.filter((h) => (JSON.parse(JSON.parse(h).body) as { data?: { PkConstituent?: number } }).data?.PkConstituent === id);
      expect(mine.length).toBeGreaterThan(0);
      expect(held.filter((h) => h.includes('MkRepubFirst') || h.toLowerCase().includes('mkrepub@example.org'))).toEqual([]);
    } finally {
      await nc.close();
    }
  }, 60_000);
});
