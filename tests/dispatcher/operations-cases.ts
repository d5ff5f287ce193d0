import { describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app.js';
import { type Receiver, until } from './support.js';

const cursorOf = (text: string) => Buffer.from(text).toString('base64url');

type Team = Awaited<ReturnType<TestApp['team']>>;

/**
 * The webhook operations of decisions.md §12, run against a started app: the embedded stack
 * (operations.test.ts) and the NATS JetStream queue (operations.nats.test.ts) alike.
 */
export function operationCases(get: () => { t: TestApp; rx: Receiver }) {
  async function endpoint(team: Team, path: string, events: string[] = ['*'], extra: Record<string, unknown> = {}) {
    const r = await team.admin.post('/webhook-endpoints', { url: get().rx.url(path), events, ...extra });
    expect(r.status, r.raw).toBe(201);
    return r.body.webhookEndpoint.id as number;
  }
  const replayDone = (team: Team, ep: number, id: string) =>
    until(async () => {
      const r = await team.admin.get(`/webhook-endpoints/${ep}/replays/${id}`);
      expect(r.status, r.raw).toBe(200);
      return r.body.replay.status !== 'running' && r.body.replay;
    }, 15_000, 'the replay to finish');

  describe('a test delivery', () => {
    it('sends one webhook.ping now, answers its outcome and logs it', async () => {
      const { rx } = get();
      const team = await get().t.team();
      const ep = await endpoint(team, '/ping-ok');
      const r = await team.admin.post(`/webhook-endpoints/${ep}/test`);
      expect(r.status, r.raw).toBe(200);
      expect(r.body.delivery).toMatchObject({ eventType: 'webhook.ping', attempt: 1, status: 'succeeded', responseStatus: 200, nextAttemptAt: null });
      const [hit] = rx.on('/ping-ok');
      expect(hit.json).toMatchObject({ id: r.body.delivery.eventId, type: 'webhook.ping', team: team.id, data: { endpointId: ep } });
      // integration-api §6.3's form, as every envelope's (and the webhook-id header's).
      expect(hit.json.id).toMatch(/^evt_\d+_\d+$/);
      expect(hit.json.created).toBe(Number(hit.json.id.split('_')[2]));
      expect(hit.headers['x-turnout-delivery']).toBe(r.body.delivery.id);
      const again = await team.admin.post(`/webhook-endpoints/${ep}/test`);
      expect(again.body.delivery.eventId).not.toBe(r.body.delivery.eventId);
      const log = await team.admin.get(`/webhook-endpoints/${ep}/deliveries`);
      expect(log.body.deliveries.map((d: any) => d.id)).toEqual([again.body.delivery.id, r.body.delivery.id]);
    });

    it('records a failure as failed and never retries it', async () => {
      const { rx } = get();
      const team = await get().t.team();
      rx.behave('/ping-bad', () => ({ status: 500 }));
      const ep = await endpoint(team, '/ping-bad');
      const r = await team.admin.post(`/webhook-endpoints/${ep}/test`);
      expect(r.body.delivery).toMatchObject({ status: 'failed', responseStatus: 500, nextAttemptAt: null });
      // A live event sent after it, and retried to the end, overtakes any retry of the ping.
      await team.api.Integration.post('/constituents', { LastName: 'After' });
      await rx.waitFor((h) => h.path === '/ping-bad' && h.json?.type === 'constituent.created', 3);
      expect(rx.on('/ping-bad').filter((h) => h.json.type === 'webhook.ping')).toHaveLength(1);
    });

    it('disables an endpoint that answers it 410 Gone, as any delivery would (reason gone), and a resent ping answered 410 too (review of §12)', async () => {
      const { rx } = get();
      const team = await get().t.team();
      rx.behave('/ping-gone', () => ({ status: 410 }));
      const ep = await endpoint(team, '/ping-gone', ['volunteer.deleted']);
      const r = await team.admin.post(`/webhook-endpoints/${ep}/test`);
      expect(r.body.delivery).toMatchObject({ status: 'failed', responseStatus: 410 });
      expect((await team.admin.get(`/webhook-endpoints/${ep}`)).body.webhookEndpoint).toMatchObject({ active: false, disabledReason: 'gone', disabledAt: expect.any(String) });
      // Enabled again, the receiver still gone: the resent ping disables it again.
      expect((await team.admin.patch(`/webhook-endpoints/${ep}`, { active: true })).status).toBe(200);
      expect((await team.admin.post(`/webhook-endpoints/${ep}/deliveries/${r.body.delivery.id}/resend`)).status).toBe(202);
      await until(async () => (await team.admin.get(`/webhook-endpoints/${ep}`)).body.webhookEndpoint.disabledReason === 'gone', 8000, 'the endpoint disabled again');
    });

    it('waiting for its throttled turn, goes to the endpoint as it is then, and a 410 from a URL the endpoint has left disables nothing (review of b8a41d8)', async () => {
      const { rx } = get();
      const team = await get().t.team();
      rx.behave('/old-gone', () => ({ status: 410 }));
      const ep = await endpoint(team, '/old-gone', ['volunteer.deleted'], { maxPerSecond: 1 });
      // The first ping takes the endpoint's one slot of this second (and, 410, disables it).
      const first = await team.admin.post(`/webhook-endpoints/${ep}/test`);
      expect(first.body.delivery.responseStatus).toBe(410);
      // A second waits ~1 s for its turn; meanwhile the operator moves the endpoint to a live URL and enables it.
      const second = team.admin.post(`/webhook-endpoints/${ep}/test`);
      await new Promise((r) => setTimeout(r, 150));
      expect((await team.admin.patch(`/webhook-endpoints/${ep}`, { url: rx.url('/new-ok'), active: true })).status).toBe(200);
      const r2 = await second;
      expect([r2.status, r2.body.delivery?.responseStatus]).toEqual([200, 200]);
      expect((await team.admin.get(`/webhook-endpoints/${ep}`)).body.webhookEndpoint).toMatchObject({ active: true, disabledReason: null });
      expect([rx.on('/old-gone').length, rx.on('/new-ok').length]).toEqual([1, 1]);
    });

    it('is sent in the endpoint\'s turn: a throttled endpoint is never sent more than maxPerSecond requests in any second, pings included (review of §12)', async () => {
      const { rx } = get();
      const team = await get().t.team();
      const ep = await endpoint(team, '/ping-throttled', ['volunteer.deleted'], { maxPerSecond: 1 });
      const answers = await Promise.all([0, 1, 2].map(() => team.admin.post(`/webhook-endpoints/${ep}/test`)));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      const at = rx.on('/ping-throttled').map((r) => r.at).sort((a, b) => a - b);
      expect(at).toHaveLength(3);
      // Let through a window (1,010 ms) apart; seen at the receiver, where a send's own way there
      // (the first one's connection) moves each arrival by some milliseconds. Unthrottled, the
      // three arrived within a few dozen.
      expect(at[2] - at[0]).toBeGreaterThanOrEqual(1500);
      for (let i = 1; i < at.length; i++) expect(at[i] - at[i - 1]).toBeGreaterThanOrEqual(500);
    });

    it('is 404 for another team\u2019s endpoint', async () => {
      const team = await get().t.team();
      const other = await get().t.team();
      const ep = await endpoint(other, '/ping-other');
      expect((await team.admin.post(`/webhook-endpoints/${ep}/test`)).body.error.code).toBe('not_found');
    });

    it('refuses a body with a field, and sends nothing (the test and a resend take none)', async () => {
      const { rx } = get();
      const team = await get().t.team();
      const ep = await endpoint(team, '/ping-body');
      const r = await team.admin.post(`/webhook-endpoints/${ep}/test`, { url: 'https://elsewhere.example/' });
      expect([r.status, r.body.error.code, r.body.error.field]).toEqual([400, 'unknown_field', 'url']);
      const sent = await team.admin.post(`/webhook-endpoints/${ep}/test`, {});
      expect(sent.status, sent.raw).toBe(200);
      const resend = await team.admin.post(`/webhook-endpoints/${ep}/deliveries/${sent.body.delivery.id}/resend`, { attempt: 9 });
      expect([resend.status, resend.body.error.code, resend.body.error.field]).toEqual([400, 'unknown_field', 'attempt']);
      expect(rx.on('/ping-body')).toHaveLength(1);
      expect((await team.admin.get(`/webhook-endpoints/${ep}/deliveries`)).body.total).toBe(1);
    });
  });

  describe('resending a delivery', () => {
    it('sends the same envelope id and body again as a new attempt chain', async () => {
      const { rx } = get();
      const team = await get().t.team();
      const ep = await endpoint(team, '/resend', ['constituent.created']);
      await team.api.Integration.post('/constituents', { LastName: 'Again' });
      const [first] = await rx.waitFor((h) => h.path === '/resend');
      const d = first.headers['x-turnout-delivery'] as string;
      await until(async () => (await team.admin.get(`/webhook-endpoints/${ep}/deliveries?status=succeeded`)).body.total === 1);
      const r = await team.admin.post(`/webhook-endpoints/${ep}/deliveries/${d}/resend`);
      expect(r.status, r.raw).toBe(202);
      expect(r.body.delivery).toMatchObject({ eventId: first.json.id, eventType: 'constituent.created', attempt: 1, status: 'pending' });
      expect(r.body.delivery.id).not.toBe(d);
      const hits = await rx.waitFor((h) => h.path === '/resend', 2);
      expect(hits[1].raw).toBe(first.raw);
      expect(hits[1].headers['x-turnout-delivery']).toBe(r.body.delivery.id);
      await until(async () => (await team.admin.get(`/webhook-endpoints/${ep}/deliveries?status=succeeded`)).body.total === 2, 8000, 'the resend logged');
    });

    it('resends a test delivery byte for byte', async () => {
      const { rx } = get();
      const team = await get().t.team();
      const ep = await endpoint(team, '/resend-ping');
      const test = await team.admin.post(`/webhook-endpoints/${ep}/test`);
      const r = await team.admin.post(`/webhook-endpoints/${ep}/deliveries/${test.body.delivery.id}/resend`);
      expect(r.status, r.raw).toBe(202);
      const hits = await rx.waitFor((h) => h.path === '/resend-ping', 2);
      expect(hits[1].raw).toBe(hits[0].raw);
    });

    it('attempts a resent test delivery once, as a test, recording its outcome and never retrying it', async () => {
      const { rx } = get();
      const team = await get().t.team();
      rx.behave('/resend-ping-bad', () => ({ status: 500 }));
      const ep = await endpoint(team, '/resend-ping-bad');
      const test = await team.admin.post(`/webhook-endpoints/${ep}/test`);
      expect(test.body.delivery.status).toBe('failed');
      const r = await team.admin.post(`/webhook-endpoints/${ep}/deliveries/${test.body.delivery.id}/resend`);
      expect(r.status, r.raw).toBe(202);
      const log = await until(async () => {
        const d = (await team.admin.get(`/webhook-endpoints/${ep}/deliveries`)).body.deliveries;
        return d.find((x: any) => x.id === r.body.delivery.id)?.status !== 'pending' && d;
      }, 8000, 'the resend attempted');
      expect(log.find((x: any) => x.id === r.body.delivery.id)).toMatchObject({ attempt: 1, status: 'failed', responseStatus: 500, nextAttemptAt: null });
      // A live event sent after it, and retried to the end, overtakes any retry of the ping.
      await team.api.Integration.post('/constituents', { LastName: 'After' });
      await rx.waitFor((h) => h.path === '/resend-ping-bad' && h.json?.type === 'constituent.created', 3);
      expect(rx.on('/resend-ping-bad').filter((h) => h.json.type === 'webhook.ping')).toHaveLength(2);
      const pings = (await team.admin.get(`/webhook-endpoints/${ep}/deliveries`)).body.deliveries.filter((d: any) => d.eventType === 'webhook.ping');
      expect(pings.map((d: any) => [d.attempt, d.status])).toEqual([
        [1, 'failed'],
        [1, 'failed'],
      ]);
    });

    it('is 404 not_found for an unknown delivery, or another endpoint\u2019s', async () => {
      const team = await get().t.team();
      const ep = await endpoint(team, '/resend-none');
      const other = await endpoint(team, '/resend-other');
      const test = await team.admin.post(`/webhook-endpoints/${other}/test`);
      for (const id of ['dlv_nope', test.body.delivery.id]) {
        const r = await team.admin.post(`/webhook-endpoints/${ep}/deliveries/${id}/resend`);
        expect([r.status, r.body.error.code]).toEqual([404, 'not_found']);
      }
    });
  });

  describe('a replay', () => {
    it('queues every event in range the endpoint subscribes to, including those from before it existed or while it was disabled', async () => {
      const { rx } = get();
      const team = await get().t.team();
      const since = new Date(Date.now() - 1000).toISOString();
      const made = [];
      for (const name of ['One', 'Two']) made.push((await team.api.Integration.post('/constituents', { LastName: name })).body.constituent.PkConstituent);
      const ep = await endpoint(team, '/replay', ['constituent.created'], { active: false });
      made.push((await team.api.Integration.post('/constituents', { LastName: 'Three' })).body.constituent.PkConstituent);
      await team.api.Integration.post('/volunteers', { LastName: 'Not subscribed' });
      expect((await team.admin.patch(`/webhook-endpoints/${ep}`, { active: true })).status).toBe(200);
      const r = await team.admin.post(`/webhook-endpoints/${ep}/replay`, { from: since });
      expect(r.status, r.raw).toBe(202);
      expect(r.body.replay).toMatchObject({ status: 'running', sent: 0, failed: 0 });
      expect(r.body.replay.id).toMatch(/^rpl_/);
      expect(await replayDone(team, ep, r.body.replay.id)).toEqual({ id: r.body.replay.id, status: 'done', queued: 3, sent: 3, failed: 0 });
      const feed = (await team.admin.get('/changes?types=constituent.created')).body.changes;
      const got = rx.on('/replay');
      expect(got.map((h) => h.json.data.PkConstituent)).toEqual(made);
      expect(got.map((h) => h.raw)).toEqual(feed.map((e: unknown) => JSON.stringify(e)));
    });

    it('takes cursors (from exclusive, to inclusive) and a types filter', async () => {
      const { rx } = get();
      const team = await get().t.team();
      const ids: number[] = [];
      for (const name of ['A', 'B', 'C', 'D']) ids.push((await team.api.Integration.post('/constituents', { LastName: name })).body.constituent.PkConstituent);
      expect((await team.api.Integration.patch(`/constituents/${ids[0]}`, { FirstName: 'Ann' })).status).toBe(200);
      const firstPage = await team.admin.get('/changes?limit=1');
      const thirdPage = await team.admin.get('/changes?limit=3');
      const ep = await endpoint(team, '/replay-range');
      const r = await team.admin.post(`/webhook-endpoints/${ep}/replay`, { from: firstPage.body.next, to: thirdPage.body.next });
      expect(r.status, r.raw).toBe(202);
      expect(await replayDone(team, ep, r.body.replay.id)).toMatchObject({ status: 'done', queued: 2, sent: 2 });
      expect(rx.on('/replay-range').map((h) => h.json.data.LastName)).toEqual(['B', 'C']);
      const typed = await team.admin.post(`/webhook-endpoints/${ep}/replay`, { from: '2000-01-01T00:00:00Z', types: ['constituent.updated'] });
      expect(await replayDone(team, ep, typed.body.replay.id)).toMatchObject({ queued: 1, sent: 1 });
      expect(rx.on('/replay-range').at(-1)!.json).toMatchObject({ type: 'constituent.updated', data: { FirstName: 'Ann' } });
    });

    it('counts deliveries given up on as failed', async () => {
      const { rx } = get();
      const team = await get().t.team();
      rx.behave('/replay-dead', () => ({ status: 500 }));
      await team.api.Integration.post('/constituents', { LastName: 'Lost' });
      const ep = await endpoint(team, '/replay-dead', ['constituent.created']);
      const r = await team.admin.post(`/webhook-endpoints/${ep}/replay`, { from: '2000-01-01T00:00:00Z' });
      expect(await replayDone(team, ep, r.body.replay.id)).toMatchObject({ status: 'done', queued: 1, sent: 0, failed: 1 });
    });

    it('refuses an absent from with missing_field, a bad range with invalid_field naming it, and an unknown replay with 404', async () => {
      const team = await get().t.team();
      const ep = await endpoint(team, '/replay-bad');
      const absent = await team.admin.post(`/webhook-endpoints/${ep}/replay`, {});
      expect([absent.status, absent.body.error.code, absent.body.error.field]).toEqual([400, 'missing_field', 'from']);
      const bad: Array<[unknown, string]> = [
        [{ from: 'yesterday' }, 'from'],
        [{ from: '2026-13-45T00:00:00Z' }, 'from'],
        [{ from: 5 }, 'from'],
        [{ from: '2026-01-01T00:00:00Z', to: 'nope' }, 'to'],
        [{ from: '2026-01-01T00:00:00Z', to: 7 }, 'to'],
        [{ from: '2026-01-01T00:00:00Z', types: 'constituent.created' }, 'types'],
        [{ from: '2026-01-01T00:00:00Z', types: [] }, 'types'],
        [{ from: '2026-01-01T00:00:00Z', types: ['constituent.exploded'] }, 'types'],
        // A range that ends before it starts, as date-times or as cursors.
        [{ from: '2026-12-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }, 'to'],
        [{ from: cursorOf('c1.9.9.10'), to: cursorOf('c1.7.7.1') }, 'to'],
        // A cursor no log gives (a prepare after its commit): the feed and the replay would read it differently.
        [{ from: cursorOf('c1.1.99999.1') }, 'from'],
      ];
      for (const [body, field] of bad) {
        const r = await team.admin.post(`/webhook-endpoints/${ep}/replay`, body);
        expect([r.status, r.body.error.code, r.body.error.field], JSON.stringify(body)).toEqual([400, 'invalid_field', field]);
      }
      expect((await team.admin.post(`/webhook-endpoints/${ep}/replay`, { from: 'nope' })).body.error.message).toBe(
        'from must be a date-time such as 2026-03-01T00:00:00Z, or a cursor from a previous answer\'s "next".',
      );
      expect((await team.admin.post(`/webhook-endpoints/${ep}/replay`, { from: '2026-01-01T00:00:00Z', since: 1 })).body.error.code).toBe('unknown_field');
      const none = await team.admin.get(`/webhook-endpoints/${ep}/replays/rpl_nope`);
      expect([none.status, none.body.error.code]).toEqual([404, 'not_found']);
    });
  });

  describe('hourly stats', () => {
    it('counts attempts per hour, oldest first, zeros included', async () => {
      const { rx } = get();
      const team = await get().t.team();
      rx.behave('/stats', (n) => ({ status: n === 2 ? 503 : 200 }));
      const ep = await endpoint(team, '/stats');
      for (let i = 0; i < 3; i++) await team.admin.post(`/webhook-endpoints/${ep}/test`);
      const r = await team.admin.get(`/webhook-endpoints/${ep}/stats?hours=3`);
      expect(r.status, r.raw).toBe(200);
      const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
      expect(r.body.hours).toEqual([
        { hour: new Date(hour.getTime() - 7_200_000).toISOString(), succeeded: 0, failed: 0 },
        { hour: new Date(hour.getTime() - 3_600_000).toISOString(), succeeded: 0, failed: 0 },
        { hour: hour.toISOString(), succeeded: 2, failed: 1 },
      ]);
      expect((await team.admin.get(`/webhook-endpoints/${ep}/stats`)).body.hours).toHaveLength(24);
      for (const hours of ['0', '721', 'x']) {
        const bad = await team.admin.get(`/webhook-endpoints/${ep}/stats?hours=${hours}`);
        expect([bad.status, bad.body.error.code, bad.body.error.field]).toEqual([400, 'invalid_field', 'hours']);
      }
    });
  });
}
