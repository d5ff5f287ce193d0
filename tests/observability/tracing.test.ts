import http from 'node:http';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../api/app.js';
import { testConfig } from '../../runtime/config.js';
import { startTracing } from '../../runtime/tracing-start.js';
import { startDispatcher } from '../../runtime/webhooks.js';
import { openRuntime, type Runtime } from '../../runtime/wiring.js';
import { fastWebhooks, type Receiver, startReceiver, until } from '../dispatcher/support.js';
import { client } from '../support/app.js';

/** A span as OTLP/HTTP's JSON encoding carries it (ids in hex). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  links?: Array<{ traceId: string; spanId: string }>;
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
}

/** An OTLP/HTTP receiver (JSON), as a collector would listen on 4318. */
async function startCollector() {
  const spans: OtlpSpan[] = [];
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...ss.spans);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}`;
  return { url, spans, paths, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const attr = (s: OtlpSpan, key: string) => s.attributes?.find((a) => a.key === key)?.value;

let collector: Awaited<ReturnType<typeof startCollector>>;
let rx: Receiver;
let runtime: Runtime;
let app: App;
const logLines: any[] = [];

beforeAll(async () => {
  collector = await startCollector();
  rx = await startReceiver();
  // The standard variables, as an operator sets them; spans batched for 50 ms, not 5 s.
  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_SERVICE_NAME: 'turnout-under-test' };
  Object.assign(process.env, env);
  runtime = await openRuntime(testConfig({ webhook: fastWebhooks() }), { env });
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line) logLines.push(JSON.parse(line));
      done();
    },
  });
  app = await buildApp(runtime.services, { logger: { level: 'info', stream } });
  await startDispatcher(runtime.services.config, runtime, { report: () => undefined });
});
afterAll(async () => {
  await app?.close();
  await runtime?.close();
  await rx?.close();
  await collector?.close();
  for (const k of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_BSP_SCHEDULE_DELAY', 'OTEL_SERVICE_NAME']) delete process.env[k];
});

describe('tracing with OTEL_EXPORTER_OTLP_ENDPOINT set (decisions.md §15)', () => {
  it('continues an incoming traceparent: the request, its command, the append and the wait for read models, and the webhook it causes carries a traceparent of an attempt span linked to the write', async () => {
    const admin = client(app, '/admin/v1', 'test-admin-token');
    const team = (await admin.post('/teams', { name: 'Traced' })).body.team.id;
    const key = (await admin.post(`/teams/${team}/api-keys`, { name: 'Integration', scope: 'read_write' })).body.key;
    expect((await admin.post(`/teams/${team}/webhook-endpoints`, { url: rx.url('/traced'), events: ['constituent.created'] })).status).toBe(201);
    const api = client(app, '/api/v1', key);

    const r = await api.post('/constituents', { LastName: 'Traced' }, { headers: { traceparent: `00-${TRACE}-${CALLER_SPAN}-01` } });
    expect(r.status, r.raw).toBe(201);

    const ofTrace = () => collector.spans.filter((s) => s.traceId === TRACE);
    const named = (name: string) => ofTrace().find((s) => s.name === name);
    await until(() => named('POST /api/v1/constituents') && named('command constituent') && named('append') && named('wait for read models'), 10_000, 'the request spans');
    const server = named('POST /api/v1/constituents')!;
    expect(server.parentSpanId).toBe(CALLER_SPAN);
    expect(server.kind).toBe(2); // SERVER
    expect(attr(server, 'http.route')).toEqual({ stringValue: '/api/v1/constituents' });
    expect(attr(server, 'http.request.method')).toEqual({ stringValue: 'POST' });
    expect(attr(server, 'http.response.status_code')).toEqual({ intValue: 201 });
    const command = ofTrace().find((s) => s.name === 'command constituent' && s.parentSpanId === server.spanId);
    expect(command, 'a command span under the request').toBeDefined();
    expect(ofTrace().some((s) => s.name === 'append' && s.parentSpanId === command!.spanId)).toBe(true);
    expect(named('wait for read models')!.parentSpanId).toBe(server.spanId);

    // The webhook: its traceparent names an attempt span, linked to the write's command span.
    const [hook] = await rx.waitFor((x) => x.path === '/traced');
    const header = String(hook.headers.traceparent);
    const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(header);
    expect(m, header).not.toBeNull();
    const attempt = await until(() => collector.spans.find((s) => s.spanId === m![2]), 10_000, 'the attempt span');
    expect(attempt.name).toBe('webhook attempt');
    expect(attempt.traceId).toBe(m![1]);
    expect(attempt.links).toEqual([expect.objectContaining({ traceId: TRACE, spanId: command!.spanId })]);
    expect(attr(attempt, 'http.response.status_code')).toEqual({ intValue: 200 });
    expect(collector.paths.every((p) => p.startsWith('POST /v1/traces application/json'))).toBe(true);
  });

  it('starts a trace of its own for a request without traceparent, and both its log lines carry the trace and span ids', async () => {
    const r = await app.inject({ method: 'GET', url: '/api/v1/constituents', headers: { authorization: 'Bearer tko_not_a_key' } });
    expect(r.statusCode).toBe(401);
    const line = await until(() => logLines.find((l) => l.msg === 'request completed' && l.res?.statusCode === 401), 5000, 'the log line');
    const arrived = logLines.find((l) => l.msg === 'incoming request' && l.reqId === line.reqId);
    expect(arrived).toMatchObject({ trace_id: line.trace_id, span_id: line.span_id });
    expect(line.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(line.trace_id).not.toBe(TRACE);
    const span = await until(() => collector.spans.find((s) => s.traceId === line.trace_id && s.spanId === line.span_id), 10_000, 'the span of the log line');
    expect(span.name).toBe('GET /api/v1/constituents');
    expect(span.parentSpanId ?? '').toBe('');
  });
});

describe('a request no route matches, traced', () => {
  it('is a span named by its method alone, without http.route: a path from outside names nothing', async () => {
    const r = await app.inject({ method: 'GET', url: '/nowhere/ada@example.org', headers: { traceparent: `00-${TRACE.replace(/^4/, '5')}-${CALLER_SPAN}-01` } });
    expect(r.statusCode).toBe(404);
    const span = await until(() => collector.spans.find((s) => s.traceId === TRACE.replace(/^4/, '5')), 10_000, 'the 404 span');
    expect(span.name).toBe('GET');
    expect(attr(span, 'http.route')).toBeUndefined();
    expect(attr(span, 'http.response.status_code')).toEqual({ intValue: 404 });
  });
});

describe('tracing with OTEL_EXPORTER_OTLP_ENDPOINT unset, or turned off', () => {
  it('is not started at all', async () => {
    expect(await startTracing({})).toBeNull();
    expect(runtime.services.tracing).not.toBeNull();
    expect(await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1', OTEL_SDK_DISABLED: 'true' })).toBeNull();
    expect(await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1', OTEL_TRACES_EXPORTER: 'none' })).toBeNull();
  });
});

describe('an OTLP protocol other than http/json', () => {
  it('is said, and traces go as http/json', async () => {
    const said: string[] = [];
    const t = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, (m) => said.push(m));
    expect(t).not.toBeNull();
    await t!.close();
    expect(said).toEqual(['tracing: OTLP protocol "grpc" is not supported; traces are sent as http/json']);
  });
});
