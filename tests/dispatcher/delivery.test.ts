import { describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { verifyWebhook } from '../../dispatcher/verify.js';
import { fastWebhooks, type Receiver, until, useWebhookApp, type WebhookApp } from './support.js';

let t: WebhookApp;
let rx: Receiver;
// A short attempt time-out: a hanging receiver's three attempts are waited out below.
useWebhookApp(
  (app, receiver) => {
    t = app;
    rx = receiver;
  },
  { webhook: fastWebhooks({ timeoutMs: 400 }) },
);

async function endpoint(team: Awaited<ReturnType<typeof t.team>>, path: string, events: string[] = ['*']) {
  const r = await team.admin.post('/webhook-endpoints', { url: rx.url(path), events });
  expect(r.status, r.raw).toBe(201);
  return r.body as { webhookEndpoint: { id: number }; secret: string };
}

describe('delivering a webhook', () => {
  it('posts a signed constituent.created envelope with the X-Turnout headers', async () => {
    const team = await t.team();
    const ep = await endpoint(team, '/created', ['constituent.created']);
    const c = await team.api.Integration.post('/constituents', { FirstName: 'Ada', LastName: 'Lovelace', Email1: 'ada@example.org' });
    expect(c.status).toBe(201);
    const [d] = await rx.waitFor((r) => r.path === '/created');
    expect(d.headers['x-turnout-event']).toBe('constituent.created');
    expect(d.headers['content-type']).toBe('application/json');
    expect(d.headers['x-turnout-delivery']).toMatch(/^dlv_/);
    expect(verifyWebhook({ rawBody: d.raw, header: d.headers['x-turnout-signature'] as string, secret: ep.secret })).toBe(true);
    expect(d.json).toMatchObject({ type: 'constituent.created', team: team.id, data: { PkConstituent: c.body.constituent.PkConstituent, FkTeam: team.id, ConstituentName: 'Ada Lovelace', Email1: 'ada@example.org', Nickname: null } });
    expect(d.json.id).toMatch(/^evt_\d+_\d+$/);
    expect(d.json.id.split('_')[2]).toBe(String(d.json.created));
    expect(d.json.data.DateCreated).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    expect(d.json.data).not.toHaveProperty('DateLastModified');
  });

  it('retries a failing receiver with the same envelope id and a new delivery id, and logs every attempt', async () => {
    const team = await t.team();
    rx.behave('/flaky', (n) => ({ status: n < 3 ? 500 : 204 }));
    const ep = await endpoint(team, '/flaky', ['constituent.created']);
    await team.api.Integration.post('/constituents', { FirstName: 'Flaky' });
    const hits = await rx.waitFor((r) => r.path === '/flaky', 3);
    expect(new Set(hits.map((h) => h.json.id)).size).toBe(1);
    expect(new Set(hits.map((h) => h.headers['x-turnout-delivery'])).size).toBe(3);
    const log = await until(async () => {
      const r = await team.admin.get(`/webhook-endpoints/${ep.webhookEndpoint.id}/deliveries`);
      return r.body.deliveries.some((d: any) => d.status === 'succeeded') && r.body;
    });
    expect(log.deliveries.map((d: any) => [d.attempt, d.status, d.responseStatus])).toEqual([
      [3, 'succeeded', 204],
      [2, 'failed', 500],
      [1, 'failed', 500],
    ]);
    expect(log.deliveries[0].id).toBe(hits[2].headers['x-turnout-delivery']);
    expect(log.deliveries[1].nextAttemptAt).not.toBeNull();
    const failed = await team.admin.get(`/webhook-endpoints/${ep.webhookEndpoint.id}/deliveries?status=failed&pageSize=1`);
    expect(failed.body).toMatchObject({ total: 2, page: 1, pageSize: 1 });
    expect(failed.body.deliveries).toHaveLength(1);
  });

  it('counts a hanging receiver as a time-out and abandons after the last attempt', async () => {
    const team = await t.team();
    rx.behave('/hang', () => ({ hang: true }));
    const ep = await endpoint(team, '/hang', ['constituent.created']);
    await team.api.Integration.post('/constituents', { FirstName: 'Hang' });
    const log = await until(async () => {
      const r = await team.admin.get(`/webhook-endpoints/${ep.webhookEndpoint.id}/deliveries?status=abandoned`);
      return r.body.total === 1 && r.body;
    });
    expect(log.deliveries[0]).toMatchObject({ attempt: 3, status: 'abandoned', responseStatus: null, nextAttemptAt: null });
    expect(log.deliveries[0].error).toMatch(/timed out/);
    expect(rx.on('/hang')).toHaveLength(3);
  });

  it('counts a redirect as a failure and never follows it', async () => {
    const team = await t.team();
    rx.behave('/moved', () => ({ status: 302, headers: { location: rx.url('/elsewhere') } }));
    const ep = await endpoint(team, '/moved', ['constituent.created']);
    await team.api.Integration.post('/constituents', { FirstName: 'Moved' });
    const log = await until(async () => {
      const r = await team.admin.get(`/webhook-endpoints/${ep.webhookEndpoint.id}/deliveries?status=abandoned`);
      return r.body.total === 1 && r.body;
    });
    expect(log.deliveries[0]).toMatchObject({ responseStatus: 302 });
    expect(log.deliveries[0].error).toMatch(/redirect/);
    expect(rx.on('/elsewhere')).toHaveLength(0);
  });

  it('never tells one team about another team\'s records', async () => {
    const a = await t.team();
    const b = await t.team();
    await endpoint(a, '/team-a', ['*']);
    await b.api.Integration.post('/constituents', { FirstName: 'Other' });
    await a.api.Integration.post('/constituents', { FirstName: 'Mine' });
    await rx.waitFor((r) => r.path === '/team-a' && r.json.data.FirstName === 'Mine');
    expect(rx.on('/team-a').every((r) => r.json.team === a.id)).toBe(true);
  });

  it('stops delivering to an inactive endpoint and signs with both secrets during a rotation overlap', async () => {
    const team = await t.team();
    const ep = await endpoint(team, '/rotate', ['constituent.created']);
    const rot = await team.admin.post(`/webhook-endpoints/${ep.webhookEndpoint.id}/rotate-secret`, { expiresInSeconds: 600 });
    expect(rot.status, rot.raw).toBe(200);
    expect(rot.body.secret).toMatch(/^whsec_/);
    await team.api.Integration.post('/constituents', { FirstName: 'Rotated' });
    const [d] = await rx.waitFor((r) => r.path === '/rotate');
    const sig = d.headers['x-turnout-signature'] as string;
    expect(sig.match(/v1=/g)).toHaveLength(2);
    expect(verifyWebhook({ rawBody: d.raw, header: sig, secret: rot.body.secret })).toBe(true);
    expect(verifyWebhook({ rawBody: d.raw, header: sig, secret: ep.secret })).toBe(true);

    const off = await team.admin.patch(`/webhook-endpoints/${ep.webhookEndpoint.id}`, { active: false });
    expect(off.body.webhookEndpoint.active).toBe(false);
    await team.api.Integration.post('/constituents', { FirstName: 'Silent' });
    // A second endpoint proves the event was dispatched while the inactive one heard nothing.
    await endpoint(team, '/rotate-witness', ['constituent.created']);
    await team.api.Integration.post('/constituents', { FirstName: 'Witnessed' });
    await rx.waitFor((r) => r.path === '/rotate-witness');
    expect(rx.on('/rotate').map((r) => r.json.data.FirstName)).toEqual(['Rotated']);
  });
});

describe('secrets, versions and changes (decisions.md 7)', () => {
  const sign = (secret: string, t: number, raw: string) => createHmac('sha256', secret).update(`${t}.${raw}`).digest('hex');

  it('signs with the new secret first during an overlap, and with the new one alone without one', async () => {
    const team = await t.team();
    const ep = await endpoint(team, '/order', ['constituent.created']);
    const overlap = await team.admin.post(`/webhook-endpoints/${ep.webhookEndpoint.id}/rotate-secret`, { expiresInSeconds: 600 });
    await team.api.Integration.post('/constituents', { FirstName: 'One' });
    const [first] = await rx.waitFor((r) => r.path === '/order');
    const { t: ts, v1 } = parts(first.headers['x-turnout-signature'] as string);
    expect(v1).toEqual([sign(overlap.body.secret, ts, first.raw), sign(ep.secret, ts, first.raw)]);

    const now = await team.admin.post(`/webhook-endpoints/${ep.webhookEndpoint.id}/rotate-secret`, {});
    await team.api.Integration.post('/constituents', { FirstName: 'Two' });
    const [second] = await rx.waitFor((r) => r.path === '/order' && r.json.data.FirstName === 'Two');
    const later = parts(second.headers['x-turnout-signature'] as string);
    // The second rotation had no overlap: it retires every older secret, the first rotation's
    // old one too although its 600 s had not run out (decisions.md 12).
    expect(later.v1).toEqual([sign(now.body.secret, later.t, second.raw)]);
  });

  it('carries the record revision as version, and fires nothing for a PATCH that changes nothing', async () => {
    const team = await t.team();
    await endpoint(team, '/versions', ['constituent.created', 'constituent.updated']);
    const c = (await team.api.Integration.post('/constituents', { FirstName: 'Ver' })).body.constituent;
    await team.api.Integration.patch(`/constituents/${c.PkConstituent}`, { FirstName: 'Ver' }); // no change
    await team.api.Integration.patch(`/constituents/${c.PkConstituent}`, { Nickname: 'V' });
    const got = await rx.waitFor((r) => r.path === '/versions' && r.json.type === 'constituent.updated');
    await rx.waitFor((r) => r.path === '/versions' && r.json.type === 'constituent.created');
    expect(rx.on('/versions').map((r) => [r.json.type, r.json.version]).sort()).toEqual([['constituent.created', 1], ['constituent.updated', 2]]); // from 1: issue 15 item 7
    expect(got[0].json.data.Nickname).toBe('V');
  });
});

function parts(header: string) {
  const p = header.split(',');
  return { t: Number(p.find((x) => x.startsWith('t='))!.slice(2)), v1: p.filter((x) => x.startsWith('v1=')).map((x) => x.slice(3)) };
}
