import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNotificationSender } from '../../commands/notifications/sender.js';
import { MemoryTransport } from '../../commands/notifications/transport.js';
import { disableEndpoint } from '../../commands/webhook-endpoints.js';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('the endpoint_disabled alert (decisions.md 12)', () => {
  it("is mailed to the team's alertEmail once, naming the endpoint, its URL and why", async () => {
    const team = await t.team();
    await t.admin.patch(`/teams/${team.id}`, { alertEmail: 'ops@example.org' });
    const id = (await team.admin.post('/webhook-endpoints', { url: 'https://hooks.example.org/dead', events: ['*'] })).body.webhookEndpoint.id;
    await disableEndpoint(t.runtime.services, { id, team: team.id }, 'gone');
    // A second disable (another worker, a later failure) records nothing and queues nothing.
    await disableEndpoint(t.runtime.services, { id, team: team.id }, 'failing');
    const transport = new MemoryTransport();
    const sender = startNotificationSender(t.runtime.services, { transport, intervalMs: 5 });
    try {
      await sender.tick();
      const mail = transport.sent.filter((m) => m.to === 'ops@example.org');
      expect(mail).toHaveLength(1);
      expect(mail[0].subject).toBe(`Webhook endpoint ${id} disabled`);
      expect(mail[0].text).toContain('https://hooks.example.org/dead');
      expect(mail[0].text).toContain('410 Gone');
    } finally {
      await sender.stop();
    }
    const alerts = (await team.admin.get('/outbox')).body.notifications.filter((n: { kind: string }) => n.kind === 'endpoint_disabled');
    expect(alerts).toEqual([expect.objectContaining({ endpointId: id, to: 'ops@example.org', status: 'sent' })]);
    expect((await team.admin.get(`/webhook-endpoints/${id}`)).body.webhookEndpoint.disabledReason).toBe('gone');
  });
});
