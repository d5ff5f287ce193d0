import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const url = 'https://hooks.example.org/throttled';

describe("an endpoint's maxPerSecond and disabled fields (decisions.md 9 and 12)", () => {
  it('shows maxPerSecond, disabledAt and disabledReason, null unless set', async () => {
    const team = await t.team();
    const c = await team.admin.post('/webhook-endpoints', { url, events: ['*'] });
    expect(c.status, c.raw).toBe(201);
    expect(c.body.webhookEndpoint).toMatchObject({ maxPerSecond: null, disabledAt: null, disabledReason: null });
    const listed = (await team.admin.get('/webhook-endpoints')).body.webhookEndpoints[0];
    expect(listed).toMatchObject({ maxPerSecond: null, disabledAt: null, disabledReason: null });
  });

  it('takes maxPerSecond on create, changes it and clears it with null on PATCH', async () => {
    const team = await t.team();
    const c = await team.admin.post('/webhook-endpoints', { url, events: ['*'], maxPerSecond: 5 });
    expect(c.body.webhookEndpoint.maxPerSecond).toBe(5);
    const id = c.body.webhookEndpoint.id;
    expect((await team.admin.patch(`/webhook-endpoints/${id}`, { maxPerSecond: 1000 })).body.webhookEndpoint.maxPerSecond).toBe(1000);
    expect((await team.admin.get(`/webhook-endpoints/${id}`)).body.webhookEndpoint.maxPerSecond).toBe(1000);
    expect((await team.admin.patch(`/webhook-endpoints/${id}`, { maxPerSecond: null })).body.webhookEndpoint.maxPerSecond).toBeNull();
  });

  it.each([0, 1001, 2.5, -1, '10', true])('refuses maxPerSecond %j on create and on PATCH, naming the field', async (maxPerSecond) => {
    const team = await t.team();
    const c = await team.admin.post('/webhook-endpoints', { url, events: ['*'], maxPerSecond });
    expect(c.status).toBe(400);
    expect(c.body.error).toMatchObject({ code: 'invalid_field', field: 'maxPerSecond' });
    const id = (await team.admin.post('/webhook-endpoints', { url, events: ['*'] })).body.webhookEndpoint.id;
    const p = await team.admin.patch(`/webhook-endpoints/${id}`, { maxPerSecond });
    expect(p.status).toBe(400);
    expect(p.body.error).toMatchObject({ code: 'invalid_field', field: 'maxPerSecond' });
  });
});
