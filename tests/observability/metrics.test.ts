import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { categoryLabel, methodLabel, Metrics } from '../../runtime/metrics.js';
import { startDispatcher } from '../../runtime/webhooks.js';
import { fastWebhooks, type Receiver, startReceiver, until } from '../dispatcher/support.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { families, parseMetrics, sampleValue } from '../support/prometheus.js';

/** decisions.md §15: every family GET /metrics must serve. */
export const SPEC_FAMILIES = [
  'turnout_http_requests_total',
  'turnout_http_request_duration_seconds',
  'turnout_events_appended_total',
  'turnout_append_duration_seconds',
  'turnout_follower_behind_events',
  'turnout_follower_state',
  'turnout_webhook_deliveries_total',
  'turnout_webhook_delivery_duration_seconds',
  'turnout_webhook_queue_depth',
  'turnout_rate_limited_total',
  'turnout_storage_bytes',
  'process_cpu_seconds_total',
  'process_resident_memory_bytes',
  'nodejs_eventloop_lag_seconds',
];

let t: TestApp;
let rx: Receiver;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-metrics-'));
  // On a data dir, so the embedded files exist; failed authentications limited to 2 a minute.
  t = await startTestApp({ dataDir: dir, webhook: fastWebhooks({ maxAttempts: 2 }), authFailuresPerMinute: 2 });
  await startDispatcher(t.runtime.services.config, t.runtime, { report: () => undefined });
  rx = await startReceiver();
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
  rmSync(dir, { recursive: true, force: true });
});

const scrape = async () => {
  const r = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer test-admin-token' } });
  expect(r.statusCode, r.body).toBe(200);
  return r;
};

describe('GET /metrics', () => {
  it('asks for the admin token, in the error shape', async () => {
    for (const headers of [{}, { authorization: 'Bearer tko_nope_nope' }]) {
      const r = await t.app.inject({ method: 'GET', url: '/metrics', headers });
      expect(r.statusCode).toBe(401);
      expect(r.json()).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
    }
  });

  it('serves every family of decisions.md §15 in the Prometheus text format, counting what happened', async () => {
    const team = await t.team();
    await team.admin.post('/webhook-endpoints', { url: rx.url('/ok'), events: ['*'] });
    await team.admin.post('/webhook-endpoints', { url: rx.url('/down'), events: ['constituent.created'] });
    rx.behave('/down', () => ({ status: 500 }));
    const c = await team.api.Integration.post('/constituents', { LastName: 'Counted' });
    expect(c.status).toBe(201);
    const [ok] = await rx.waitFor((r) => r.path === '/ok');
    // Tracing is off here (OTEL_EXPORTER_OTLP_ENDPOINT unset): no runtime tracing, no header.
    expect(t.runtime.services.tracing).toBeNull();
    expect(ok.headers.traceparent).toBeUndefined();
    // The failing endpoint: attempt 1 failed, attempt 2 (the last) abandoned.
    await rx.waitFor((r) => r.path === '/down', 2);
    await until(async () => sampleValue(parseMetrics((await scrape()).body), 'turnout_webhook_deliveries_total', { outcome: 'abandoned' }) === 1, 8000, 'the abandoned delivery counted');

    const r = await scrape();
    expect(r.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const names = families(r.body);
    for (const f of SPEC_FAMILIES) expect(names, f).toContain(f);
    const s = parseMetrics(r.body);
    expect(sampleValue(s, 'turnout_http_requests_total', { method: 'POST', route: '/api/v1/constituents', status: '201' })).toBe(1);
    expect(sampleValue(s, 'turnout_http_request_duration_seconds_count', { method: 'POST', route: '/api/v1/constituents' })).toBe(1);
    expect(sampleValue(s, 'turnout_events_appended_total', { category: 'constituent' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(s, 'turnout_append_duration_seconds_count')).toBeGreaterThanOrEqual(3);
    expect(sampleValue(s, 'turnout_webhook_deliveries_total', { outcome: 'succeeded' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(s, 'turnout_webhook_deliveries_total', { outcome: 'failed' })).toBe(1);
    expect(sampleValue(s, 'turnout_webhook_delivery_duration_seconds_count')).toBeGreaterThanOrEqual(3);
    expect(sampleValue(s, 'turnout_webhook_queue_depth')).toBeGreaterThanOrEqual(0);
    expect(sampleValue(s, 'turnout_follower_state', { follower: 'read-models', state: 'caught_up' })).toBe(1);
    expect(sampleValue(s, 'turnout_follower_state', { follower: 'read-models', state: 'failed' })).toBe(0);
    expect(sampleValue(s, 'turnout_follower_state', { follower: 'webhook-dispatcher', state: 'caught_up' })).toBe(1);
    expect(sampleValue(s, 'turnout_follower_behind_events', { follower: 'read-models' })).toBeGreaterThanOrEqual(0);
    expect(sampleValue(s, 'turnout_storage_bytes', { file: 'turnout.sqlite' })).toBeGreaterThan(0);
    expect(sampleValue(s, 'turnout_storage_bytes', { file: 'readmodels.sqlite' })).toBeGreaterThan(0);
    expect(sampleValue(s, 'turnout_storage_bytes', { file: 'webhooks.sqlite' })).toBeGreaterThan(0);
    // Every embedded file (§15), the erasures' journal too; nothing but SQLite files, no file per record.
    expect(sampleValue(s, 'turnout_storage_bytes', { file: 'erasures.sqlite' })).toBeGreaterThan(0);
    const files = s.filter((x) => x.name === 'turnout_storage_bytes').map((x) => x.labels.file);
    for (const f of files) expect(f).toMatch(/\.sqlite(-wal)?$/);
  });

  it('counts requests refused as rate limited', async () => {
    const before = sampleValue(parseMetrics((await scrape()).body), 'turnout_rate_limited_total') ?? 0;
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await t.app.inject({ method: 'GET', url: '/api/v1/constituents', headers: { authorization: 'Bearer tko_wrong_key' } })).statusCode);
    const limited = statuses.filter((s) => s === 429).length;
    expect(limited).toBeGreaterThan(0);
    expect(sampleValue(parseMetrics((await scrape()).body), 'turnout_rate_limited_total')).toBe(before + limited);
  });

  it('labels only from bounded sets: no name, e-mail, id or key of the data, and few routes', async () => {
    const team = await t.team([
      ['Integration', 'read_write'],
      ['Reader', 'read_only'],
    ]);
    const api = team.api.Integration;
    const secrets: string[] = [team.keys.Integration.key, team.keys.Reader.key];
    const ids: number[] = [];
    for (let i = 0; i < 50; i++) {
      const first = `Zebulon${i}Quartermaine`;
      const email = `zq.${i}.marker@metrics-leak.example`;
      const r = await api.post('/constituents', { FirstName: first, LastName: `Xanthippe${i}`, Email1: email });
      expect(r.status, r.raw).toBe(201);
      ids.push(r.body.constituent.PkConstituent);
      secrets.push(first, `Xanthippe${i}`, email);
    }
    for (const id of ids) expect((await team.api.Reader.get(`/constituents/${id}`)).status).toBe(200);
    await t.app.inject({ method: 'GET', url: '/nowhere/zebulon-quartermaine' });

    const text = (await scrape()).body;
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/metrics-leak|Quartermaine|Xanthippe|tko_/);
    const samples = parseMetrics(text);
    // Turnout's own labels (a histogram's `le` is a bucket bound, and the runtime's are its versions).
    const labelValues = new Set(samples.filter((s) => s.name.startsWith('turnout_')).flatMap((s) => Object.entries(s.labels).filter(([k]) => k !== 'le').map(([, v]) => v)));
    for (const id of ids) expect(labelValues.has(String(id)), `id ${id} as a label`).toBe(false);
    for (const v of labelValues) expect(v).not.toMatch(/\/\d+(\/|$)/);
    const routes = new Set(samples.filter((s) => s.name === 'turnout_http_requests_total').map((s) => s.labels.route));
    expect(routes).toContain('/api/v1/constituents/:id');
    expect(routes).toContain('unmatched');
    expect(routes.size).toBeLessThanOrEqual(10);
  });
});

describe('the delivery outcomes', () => {
  it('are each served at 0 before the first delivery, so the first abandonment is an increase an alert sees', async () => {
    // Prometheus's increase() cannot count the sample that creates a series: a counter born at 1
    // would leave TurnoutWebhooksAbandoned (deploy/prometheus/alerts.yml) silent on that delivery.
    const m = new Metrics({ followers: async () => [], queueDepth: async () => null, dataDir: null });
    const s = parseMetrics(await m.text());
    for (const outcome of ['succeeded', 'failed', 'abandoned']) expect(sampleValue(s, 'turnout_webhook_deliveries_total', { outcome }), outcome).toBe(0);
    m.delivered('abandoned', null);
    expect(sampleValue(parseMetrics(await m.text()), 'turnout_webhook_deliveries_total', { outcome: 'abandoned' })).toBe(1);
  });
});

describe('a scrape', () => {
  it('reads the followers once for both follower families', async () => {
    let reads = 0;
    const metrics = new Metrics({
      followers: async () => (reads++, [{ name: 'read-models', state: 'caught_up', behind: 2 }]),
      queueDepth: async () => null,
      dataDir: null,
    });
    const text = await metrics.text();
    expect(sampleValue(parseMetrics(text), 'turnout_follower_behind_events', { follower: 'read-models' })).toBe(2);
    expect(sampleValue(parseMetrics(text), 'turnout_follower_state', { follower: 'read-models', state: 'caught_up' })).toBe(1);
    expect(reads).toBe(1);
    await metrics.text();
    expect(reads).toBe(2);
  });
});

describe('the label sets', () => {
  it('name a stream by its category only, whatever its key holds, and anything unknown `other`', () => {
    expect(categoryLabel('constituent-12')).toBe('constituent');
    expect(categoryLabel('constituent_email-ada-lovelace@example.org')).toBe('constituent_email');
    expect(categoryLabel('volunteer_task_group-3')).toBe('volunteer_task_group');
    expect(categoryLabel('batch-0123abcd')).toBe('batch');
    expect(categoryLabel('ids-constituent')).toBe('ids');
    expect(categoryLabel('ada@example.org')).toBe('other');
    expect(categoryLabel('made_up-1')).toBe('other');
  });

  it('keep the methods Turnout routes and call the rest `other`', () => {
    expect(['GET', 'POST', 'PATCH', 'DELETE'].map(methodLabel)).toEqual(['GET', 'POST', 'PATCH', 'DELETE']);
    expect(methodLabel('PROPFIND')).toBe('other');
  });
});
