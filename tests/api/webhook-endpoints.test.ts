import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
let strict: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  strict = await startTestApp({ webhook: { allowInsecure: false, retryBaseMs: 30000, retryMaxMs: 3600000, maxAttempts: 9, timeoutMs: 10000 } });
});
afterAll(async () => {
  await t.close();
  await strict.close();
});

describe('webhook endpoints through /admin/v1', () => {
  it('creates, reads, lists, updates and deletes an endpoint', async () => {
    const team = await t.team();
    const c = await team.admin.post('/webhook-endpoints', { url: 'https://hooks.example.org/turnout', events: ['constituent.created', 'donation.created'], description: 'CRM' });
    expect(c.status, c.raw).toBe(201);
    expect(c.body.webhookEndpoint).toMatchObject({ url: 'https://hooks.example.org/turnout', events: ['constituent.created', 'donation.created'], active: true, description: 'CRM' });
    expect(c.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(c.body.secret.slice(6), 'base64')).toHaveLength(32);
    const id = c.body.webhookEndpoint.id;
    const one = await team.admin.get(`/webhook-endpoints/${id}`);
    expect(one.body).toEqual({ webhookEndpoint: c.body.webhookEndpoint, secret: c.body.secret });
    const list = await team.admin.get('/webhook-endpoints');
    expect(list.body.webhookEndpoints).toEqual([c.body.webhookEndpoint]);
    const p = await team.admin.patch(`/webhook-endpoints/${id}`, { events: ['*'], active: false });
    expect(p.body.webhookEndpoint).toMatchObject({ events: ['*'], active: false });
    const rot = await team.admin.post(`/webhook-endpoints/${id}/rotate-secret`, {});
    expect(rot.body.secret).not.toBe(c.body.secret);
    expect((await team.admin.get(`/webhook-endpoints/${id}`)).body.secret).toBe(rot.body.secret);
    const d = await team.admin.del(`/webhook-endpoints/${id}`);
    expect(d.status).toBe(200);
    expect(d.body.webhookEndpoint.id).toBe(id);
    expect((await team.admin.get(`/webhook-endpoints/${id}`)).status).toBe(404);
    expect((await team.admin.get('/webhook-endpoints')).body.webhookEndpoints).toEqual([]);
    expect((await team.admin.get(`/webhook-endpoints/${id}/deliveries`)).status).toBe(404);
  });

  it.each([
    [{ url: 'https://x.example.org/h', events: ['constituent.exploded'] }, 'invalid_field', 'events'],
    [{ url: 'https://x.example.org/h', events: [] }, 'invalid_field', 'events'],
    [{ url: 'https://x.example.org/h' }, 'missing_field', 'events'],
    [{ events: ['*'] }, 'missing_field', 'url'],
    [{ url: 'https://x.example.org/h', events: ['*'], active: 'yes' }, 'invalid_field', 'active'],
    [{ url: 'https://x.example.org/h', events: ['*'], secret: 'mine' }, 'unknown_field', 'secret'],
  ])('refuses %j', async (body, code, field) => {
    const team = await t.team();
    const r = await team.admin.post('/webhook-endpoints', body);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code, field });
    expect((await team.admin.get('/webhook-endpoints')).body.webhookEndpoints).toEqual([]);
  });

  it.each(['http://hooks.example.org/x', 'https://127.0.0.1/x', 'https://2130706433/x', 'https://[::ffff:10.0.0.1]/x', 'https://localhost/x', 'https://10.0.0.1/x'])(
    'refuses %s when insecure mode is off, on create and on update',
    async (url) => {
      const team = await strict.team();
      const r = await team.admin.post('/webhook-endpoints', { url, events: ['*'] });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'invalid_field', field: 'url' });
      const ok = await team.admin.post('/webhook-endpoints', { url: 'https://8.8.8.8/hook', events: ['*'] });
      expect(ok.status, ok.raw).toBe(201);
      const p = await team.admin.patch(`/webhook-endpoints/${ok.body.webhookEndpoint.id}`, { url });
      expect(p.body.error).toMatchObject({ code: 'invalid_field', field: 'url' });
    },
  );

  it('keeps endpoints to their team', async () => {
    const a = await t.team();
    const b = await t.team();
    const c = await a.admin.post('/webhook-endpoints', { url: 'https://x.example.org/h', events: ['*'] });
    expect((await b.admin.get(`/webhook-endpoints/${c.body.webhookEndpoint.id}`)).status).toBe(404);
    expect((await b.admin.del(`/webhook-endpoints/${c.body.webhookEndpoint.id}`)).status).toBe(404);
  });

  it('refuses a negative rotation overlap', async () => {
    const team = await t.team();
    const c = await team.admin.post('/webhook-endpoints', { url: 'https://x.example.org/h', events: ['*'] });
    const r = await team.admin.post(`/webhook-endpoints/${c.body.webhookEndpoint.id}/rotate-secret`, { expiresInSeconds: -5 });
    expect(r.body.error).toMatchObject({ code: 'invalid_field', field: 'expiresInSeconds' });
  });
});
