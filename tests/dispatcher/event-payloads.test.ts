import { describe, expect, it } from 'vitest';
import { type Receiver, useWebhookApp, type WebhookApp } from './support.js';

let t: WebhookApp;
let rx: Receiver;
useWebhookApp((app, receiver) => {
  t = app;
  rx = receiver;
});

describe('event webhook payloads', () => {
  it('carry every field of the API read, IsPublic and IsTicketSales included, on created, updated and deleted', async () => {
    const team = await t.team();
    expect((await team.admin.post('/webhook-endpoints', { url: rx.url('/events'), events: ['event.created', 'event.updated', 'event.deleted'] })).status).toBe(201);
    const api = team.api.Integration;
    const created = await api.post('/events', { EventTitle: 'Gala', StartDate: '2030-06-01' });
    expect(created.status, created.raw).toBe(201);
    const id = created.body.event.PkEvent;
    expect((await api.patch(`/events/${id}`, { StartTime: '7 PM' })).status).toBe(200);
    const read = (await api.get(`/events/${id}`)).body.event;
    expect((await team.admin.del(`/events/${id}`)).status).toBe(200);

    const hits = await rx.waitFor((r) => r.path === '/events' && r.json?.data?.PkEvent === id, 3);
    const byType: Record<string, any> = Object.fromEntries(hits.map((h) => [h.json.type, h.json.data]));
    const { DateLastModified: _m, ...readFields } = read;
    expect(byType['event.created']).toEqual({ ...readFields, StartTime: null });
    expect(byType['event.updated']).toEqual({ ...read, DateLastModified: expect.any(String) });
    expect(byType['event.deleted']).toEqual({ ...readFields, DeletedUtc: expect.any(String) });
    for (const data of Object.values(byType)) expect([data.IsPublic, data.IsTicketSales]).toEqual([false, false]);
  });
});
