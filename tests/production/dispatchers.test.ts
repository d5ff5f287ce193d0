import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver } from '../dispatcher/support.js';
import { startNats, type NatsServer, waitUntil } from '../support/nats.js';
import { type Build, buildService, http, spawnTurnout, type TurnoutProcess } from '../support/process.js';
import { parseMetrics, sampleValue } from '../support/prometheus.js';

/**
 * An API process and two dispatcher processes on one embedded log and one NATS server: the
 * dispatchers share the JetStream delivery queue, and each event reaches the receiver once.
 */
let build: Build;
let nats: NatsServer;
let dataDir: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let api: TurnoutProcess;
const dispatchers: TurnoutProcess[] = [];
let env: Record<string, string>;

beforeAll(async () => {
  [build, nats, receiver] = await Promise.all([buildService(), startNats(), startReceiver()]);
  dataDir = mkdtempSync(path.join(tmpdir(), 'turnout-disp-'));
  env = {
    TURNOUT_DATA_DIR: dataDir,
    TURNOUT_NATS_URL: nats.url,
    TURNOUT_WEBHOOK_ALLOW_INSECURE: '1',
    TURNOUT_WEBHOOK_RETRY_BASE_MS: '50',
    TURNOUT_WEBHOOK_RETRY_MAX_MS: '200',
    TURNOUT_RATE_LIMIT_PER_SECOND: '0',
    TURNOUT_RATE_LIMIT_PER_MINUTE: '0',
  };
  api = await spawnTurnout(build, { role: 'api', env });
  for (let i = 0; i < 2; i++) dispatchers.push(await spawnTurnout(build, { role: 'dispatcher', env }));
}, 180_000);

afterAll(async () => {
  await Promise.all([api?.stop(), ...dispatchers.map((d) => d.stop())]);
  await receiver?.close();
  await nats?.stop();
  build?.remove();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('two dispatcher processes sharing the NATS delivery queue', () => {
  it('deliver every event once, and the survivor carries on when one stops', async () => {
    const admin = http(`${api.url}/admin/v1`, 'test-admin-token');
    const team = (await admin.post('/teams', { name: 'Webhooks' })).body.team.id;
    const key = (await admin.post(`/teams/${team}/api-keys`, { name: 'Integration', scope: 'read_write' })).body.key;
    const ep = await admin.post(`/teams/${team}/webhook-endpoints`, { url: receiver.url('/hook'), events: ['constituent.created'] });
    expect(ep.status, JSON.stringify(ep.body)).toBe(201);
    // Every other first attempt fails, so retries are shared out too.
    receiver.behave('/hook', (n) => ({ status: n % 4 === 1 ? 500 : 200 }));
    const client = http(`${api.url}/api/v1`, key);
    const created: number[] = [];
    const create = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const r = await client.post('/constituents', { FirstName: `Hook${created.length}`, LastName: 'Test' });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        created.push(r.body.constituent.PkConstituent);
      }
    };
    // The constituents whose creation reached the receiver with a 2xx answer.
    const delivered = () => new Set(receiver.on('/hook').filter((r) => r.n % 4 !== 1).map((r) => r.json?.data?.PkConstituent));

    await create(15);
    await waitUntil('the first fifteen deliveries', () => created.every((id) => delivered().has(id)), 20_000);

    await dispatchers[0].stop();
    await create(15);
    await waitUntil('all thirty deliveries', () => created.every((id) => delivered().has(id)), 20_000);

    // No attempt was sent twice: every X-Turnout-Delivery (one per attempt) arrived once.
    const hits = receiver.on('/hook');
    const attemptIds = hits.map((r) => r.headers['x-turnout-delivery']);
    expect(new Set(attemptIds).size).toBe(hits.length);
    // Each envelope succeeded exactly once, on its last attempt (the receiver failed every n % 4 === 1).
    const byEnvelope = new Map<string, number[]>();
    for (const r of hits) byEnvelope.set(r.json.id, [...(byEnvelope.get(r.json.id) ?? []), r.n]);
    expect(byEnvelope.size).toBe(30);
    for (const ns of byEnvelope.values()) {
      expect(ns.filter((n) => n % 4 !== 1)).toHaveLength(1);
      expect(ns.at(-1)! % 4).not.toBe(1);
    }
    // The delivery log agrees: one row per attempt made.
    // The worker records an attempt once the receiver has answered: wait for the last records.
    let rows: Array<{ id: string; status: string }> = [];
    await waitUntil('the delivery log to record every success', async () => {
      const list = await admin.get(`/teams/${team}/webhook-endpoints/${ep.body.webhookEndpoint.id}/deliveries?pageSize=100`);
      rows = list.body.deliveries;
      return rows.filter((d) => d.status === 'succeeded').length >= 30;
    });
    expect(rows.filter((d) => d.status === 'succeeded')).toHaveLength(30);
    expect(rows.filter((d) => d.status === 'failed')).toHaveLength(hits.length - 30);
    expect(new Set(rows.map((d) => d.id)).size).toBe(rows.length);
  });
});

describe('each process of the NATS stack serves its own metrics (decisions.md §15)', () => {
  const scrape = async (p: TurnoutProcess, token = 'test-admin-token') =>
    fetch(`${p.url}/metrics`, { headers: { authorization: `Bearer ${token}` } }).then(async (r) => ({ status: r.status, text: await r.text() }));

  it('the API its requests, the surviving dispatcher its deliveries and the JetStream queue depth', async () => {
    expect((await scrape(dispatchers[1], 'wrong')).status).toBe(401);
    const [a, d] = await Promise.all([scrape(api), scrape(dispatchers[1])]);
    expect(a.status).toBe(200);
    expect(d.status).toBe(200);
    const fromApi = parseMetrics(a.text);
    expect(sampleValue(fromApi, 'turnout_http_requests_total', { method: 'POST', route: '/api/v1/constituents', status: '201' })).toBe(30);
    expect(sampleValue(fromApi, 'turnout_events_appended_total', { category: 'constituent' })).toBeGreaterThanOrEqual(30);
    expect(sampleValue(fromApi, 'turnout_webhook_deliveries_total', { outcome: 'succeeded' })).toBe(0);
    const fromDispatcher = parseMetrics(d.text);
    // The survivor delivered at least the fifteen sent after the other stopped.
    expect(sampleValue(fromDispatcher, 'turnout_webhook_deliveries_total', { outcome: 'succeeded' })).toBeGreaterThanOrEqual(15);
    expect(sampleValue(fromDispatcher, 'turnout_webhook_queue_depth')).toBe(0);
    expect(sampleValue(fromDispatcher, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(fromDispatcher.some((s) => s.name === 'turnout_http_requests_total')).toBe(false);
  });
});
