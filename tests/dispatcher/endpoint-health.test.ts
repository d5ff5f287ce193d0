import { describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app.js';
import { natsAvailable } from './nats-server.js';
import { fastWebhooks, type Receiver, until, useWebhookApp, type WebhookApp } from './support.js';

// decisions.md 12 on both stacks: the embedded queue, and NATS JetStream (a server of its own).
const stacks = [
  ['the embedded queue', false],
  ['NATS JetStream', true],
] as const;

describe.each(stacks)('endpoint health on %s', (_name, useNats) => {
  let t: WebhookApp;
  let rx: Receiver;
  const skip = useNats && !natsAvailable;
  // A retry maximum of 1.5 s: above the backoff's 20 ms, so a Retry-After shows, and low enough to cap an hour.
  if (!skip)
    useWebhookApp(
      (app, receiver) => {
        t = app;
        rx = receiver;
      },
      { webhook: fastWebhooks({ retryMaxMs: 1500 }), nats: useNats },
    );

  type Team = Awaited<ReturnType<TestApp['team']>>;
  async function endpoint(team: Team, path: string, extra: Record<string, unknown> = {}): Promise<number> {
    const r = await team.admin.post('/webhook-endpoints', { url: rx.url(path), events: ['constituent.created'], ...extra });
    expect(r.status, r.raw).toBe(201);
    return r.body.webhookEndpoint.id;
  }
  const created = (team: Team, name: string) => team.api.Integration.post('/constituents', { LastName: name });
  const viewOf = async (team: Team, id: number) => (await team.admin.get(`/webhook-endpoints/${id}`)).body.webhookEndpoint;
  const deliveries = async (team: Team, id: number) => (await team.admin.get(`/webhook-endpoints/${id}/deliveries`)).body.deliveries;

  describe("a receiver's back-pressure", () => {
    it.skipIf(skip)('retries a 429 when its Retry-After says, not on the backoff', async () => {
      const team = await t.team();
      const path = `/busy-${useNats}`;
      rx.behave(path, (n) => (n === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 204 }));
      const id = await endpoint(team, path);
      await created(team, 'Busy');
      const [first, second] = await rx.waitFor((r) => r.path === path, 2, 20_000);
      expect(second.at - first.at).toBeGreaterThanOrEqual(950);
      const log = await until(async () => {
        const d = await deliveries(team, id);
        return d.some((x: { status: string }) => x.status === 'succeeded') && d;
      }, 20_000);
      const failed = log.find((d: { attempt: number }) => d.attempt === 1);
      expect(failed).toMatchObject({ status: 'failed', responseStatus: 429 });
      expect(Date.parse(failed.nextAttemptAt) - Date.parse(failed.attemptedAt)).toBeGreaterThanOrEqual(1000);
    });

    it.skipIf(skip)('caps a 503 Retry-After date at the retry maximum', async () => {
      const team = await t.team();
      const path = `/unavailable-${useNats}`;
      const inAnHour = new Date(Date.now() + 3_600_000).toUTCString();
      rx.behave(path, (n) => (n === 1 ? { status: 503, headers: { 'retry-after': inAnHour } } : { status: 204 }));
      const id = await endpoint(team, path);
      await created(team, 'Unavailable');
      const [first, second] = await rx.waitFor((r) => r.path === path, 2, 20_000);
      expect(second.at - first.at).toBeGreaterThanOrEqual(1200);
      // The retry was scheduled at the maximum, 1.5 s after the answer, not in an hour: the delivery
      // log says so, where the time between the two requests also counts a busy machine's delays.
      // (attemptedAt is when the request went out, so the answer's own time comes on top.)
      const failed = (await deliveries(team, id)).find((d: { attempt: number }) => d.attempt === 1);
      expect(failed).toMatchObject({ status: 'failed', responseStatus: 503 });
      const scheduled = Date.parse(failed.nextAttemptAt) - Date.parse(failed.attemptedAt);
      expect(scheduled).toBeGreaterThanOrEqual(1500);
      expect(scheduled).toBeLessThan(60_000);
    });
  });

  describe('auto-disable', () => {
    it.skipIf(skip)("disables an endpoint that answers 410 Gone, alerts the team's alertEmail, and re-enabling sends only what comes after", async () => {
      const team = await t.team();
      expect((await t.admin.patch(`/teams/${team.id}`, { alertEmail: 'ops@example.org' })).status).toBe(200);
      const path = `/gone-${useNats}`;
      rx.behave(path, (n) => ({ status: n === 1 ? 410 : 204 }));
      const id = await endpoint(team, path);
      await created(team, 'First');
      const disabled = await until(async () => {
        const v = await viewOf(team, id);
        return v.disabledReason && v;
      }, 20_000);
      expect(disabled).toMatchObject({ active: false, disabledReason: 'gone', disabledAt: expect.any(String) });
      expect((await deliveries(team, id))[0]).toMatchObject({ attempt: 1, status: 'abandoned', responseStatus: 410 });
      const outbox = (await team.admin.get('/outbox')).body.notifications;
      expect(outbox).toContainEqual(expect.objectContaining({ kind: 'endpoint_disabled', endpointId: id, to: 'ops@example.org', status: expect.stringMatching(/pending|sending|sent/), taskId: null, volunteerId: null }));

      await created(team, 'While disabled');
      const enabled = await team.admin.patch(`/webhook-endpoints/${id}`, { active: true });
      expect(enabled.body.webhookEndpoint).toMatchObject({ active: true, disabledAt: null, disabledReason: null });
      await created(team, 'After');
      await rx.waitFor((r) => r.path === path && r.json?.data?.LastName === 'After', 1, 20_000);
      expect(rx.on(path).map((r) => r.json.data.LastName)).toEqual(['First', 'After']);
    });
  });

  describe('re-enabling', () => {
    it.skipIf(skip)('does not send a retry queued before the disable: only a replay resends (decisions.md §12)', async () => {
      const team = await t.team();
      const path = `/re-enabled-${useNats}`;
      // The retry comes due a second later: time enough to disable and enable the endpoint again.
      rx.behave(path, (n) => (n === 1 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 204 }));
      const id = await endpoint(team, path);
      await created(team, 'Before');
      await rx.waitFor((r) => r.path === path);
      expect((await team.admin.patch(`/webhook-endpoints/${id}`, { active: false })).status).toBe(200);
      expect((await team.admin.patch(`/webhook-endpoints/${id}`, { active: true })).status).toBe(200);
      const retry = await until(async () => (await deliveries(team, id)).find((d: { attempt: number; status: string }) => d.attempt === 2 && d.status !== 'pending'), 20_000, 'the retry to come due');
      expect(retry).toMatchObject({ status: 'abandoned', responseStatus: null });
      await created(team, 'After');
      await rx.waitFor((r) => r.path === path && r.json?.data?.LastName === 'After', 1, 20_000);
      expect(rx.on(path).map((r) => r.json.data.LastName)).toEqual(['Before', 'After']);
    });
  });

  describe('maxPerSecond', () => {
    it.skipIf(skip)('never sends an endpoint more than its limit in any second, and drops nothing', async () => {
      const team = await t.team();
      const path = `/throttled-${useNats}`;
      const id = await endpoint(team, path, { maxPerSecond: 2 });
      // Five at two a second: three seconds' windows, each pair two apart checked.
      const names = Array.from({ length: 5 }, (_, i) => `T${i}`);
      for (const n of names) await created(team, n);
      const hits = await rx.waitFor((r) => r.path === path, names.length, 20_000);
      expect(hits.map((h) => h.json.data.LastName).sort()).toEqual(names);
      // When each request went out, from the delivery log: taken just after the throttle lets it
      // go, so closer to its decision than the receiver's arrival times, which also count how long
      // each took to get there (907 ms apart seen here for sends the throttle spaced by a second).
      // Still, a process that a loaded machine leaves waiting for a core between the two readings
      // of the clock shifts one by tens of milliseconds (947 ms seen): the bound leaves a quarter
      // of a second for that, where sends without the throttle would go out all at once. The
      // throttle's exact window is tests/dispatcher/throttle.test.ts', on a clock of its own.
      const log = await until(async () => {
        const d = await deliveries(team, id);
        return d.filter((x: { status: string }) => x.status === 'succeeded').length === names.length && d;
      }, 20_000);
      const at = log.map((d: { attemptedAt: string }) => Date.parse(d.attemptedAt)).sort((a: number, b: number) => a - b);
      for (let i = 2; i < at.length; i++) expect(at[i] - at[i - 2], `requests ${i - 2} and ${i}`).toBeGreaterThanOrEqual(750);
    });
  });
});
