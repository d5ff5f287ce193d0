import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { verifyStandardWebhook, verifyWebhook } from '../../dispatcher/verify.js';
import { type Received, type Receiver, useWebhookApp, type WebhookApp } from './support.js';

/**
 * decisions.md 12: every delivery carries the Standard Webhooks headers beside the X-Turnout ones,
 * and the `standardwebhooks` package's `Webhook(secret).verify` accepts it, with each live secret.
 */
let t: WebhookApp;
let rx: Receiver;
useWebhookApp((app, receiver) => {
  t = app;
  rx = receiver;
});

type Team = Awaited<ReturnType<WebhookApp['team']>>;

async function endpoint(team: Team, path: string) {
  const r = await team.admin.post('/webhook-endpoints', { url: rx.url(path), events: ['constituent.created'] });
  expect(r.status, r.raw).toBe(201);
  return r.body as { webhookEndpoint: { id: number }; secret: string };
}

const rotate = async (team: Team, id: number, expiresInSeconds: number) =>
  (await team.admin.post(`/webhook-endpoints/${id}/rotate-secret`, { expiresInSeconds })).body.secret as string;

const headersOf = (d: Received) => d.headers as Record<string, string>;

/** What `standardwebhooks` makes of a delivery with `secret`: the parsed body, or its refusal. */
function standardVerify(d: Received, secret: string): unknown {
  try {
    return new Webhook(secret).verify(d.raw, headersOf(d));
  } catch (err) {
    return err instanceof Error ? err.message : err;
  }
}

async function deliveredTo(team: Team, path: string, FirstName: string): Promise<Received> {
  await team.api.Integration.post('/constituents', { FirstName });
  const [d] = await rx.waitFor((r) => r.path === path && r.json?.data?.FirstName === FirstName);
  return d;
}

describe('Standard Webhooks headers on every delivery', () => {
  it('carries webhook-id (the envelope id), webhook-timestamp and a webhook-signature that standardwebhooks verifies', async () => {
    const team = await t.team();
    const ep = await endpoint(team, '/std');
    const d = await deliveredTo(team, '/std', 'Standard');
    expect(d.headers['webhook-id']).toBe(d.json.id);
    // One signing moment for both header sets.
    expect(`t=${d.headers['webhook-timestamp']},`).toBe((d.headers['x-turnout-signature'] as string).split('v1=')[0]);
    expect(d.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(standardVerify(d, ep.secret)).toEqual(d.json);
    expect(verifyStandardWebhook({ rawBody: d.raw, headers: d.headers, secret: ep.secret })).toBe(true);
    expect(verifyWebhook({ rawBody: d.raw, header: d.headers['x-turnout-signature'] as string, secret: ep.secret })).toBe(true);
    expect(standardVerify({ ...d, raw: d.raw.replace('Standard', 'Forged') }, ep.secret)).toBe('No matching signature found');
  });

  it('signs with both live secrets during a rotation overlap (new first), and with the newest alone after a rotation without one', async () => {
    const team = await t.team();
    const ep = await endpoint(team, '/std-rotate');
    const second = await rotate(team, ep.webhookEndpoint.id, 600);

    const during = await deliveredTo(team, '/std-rotate', 'Overlap');
    const entries = (during.headers['webhook-signature'] as string).split(' ');
    expect(entries).toHaveLength(2);
    const ts = new Date(Number(during.headers['webhook-timestamp']) * 1000);
    expect(entries[0]).toBe(new Webhook(second).sign(during.json.id, ts, during.raw));
    expect(entries[1]).toBe(new Webhook(ep.secret).sign(during.json.id, ts, during.raw));
    expect(standardVerify(during, second)).toEqual(during.json);
    expect(standardVerify(during, ep.secret)).toEqual(during.json);

    const third = await rotate(team, ep.webhookEndpoint.id, 0);
    const after = await deliveredTo(team, '/std-rotate', 'Retired');
    expect((after.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
    expect(standardVerify(after, third)).toEqual(after.json);
    expect(standardVerify(after, second)).toBe('No matching signature found');
    expect(standardVerify(after, ep.secret)).toBe('No matching signature found');
  });

  it('keeps the same webhook-id on every attempt of a delivery', async () => {
    const team = await t.team();
    rx.behave('/std-retry', (n) => ({ status: n < 2 ? 500 : 204 }));
    const ep = await endpoint(team, '/std-retry');
    await team.api.Integration.post('/constituents', { FirstName: 'Again' });
    const hits = await rx.waitFor((r) => r.path === '/std-retry', 2);
    expect(hits.map((h) => h.headers['webhook-id'])).toEqual([hits[0].json.id, hits[0].json.id]);
    expect(hits.map((h) => standardVerify(h, ep.secret))).toEqual([hits[0].json, hits[0].json]);
  });
});
