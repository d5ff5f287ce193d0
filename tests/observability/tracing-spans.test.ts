import { afterEach, describe, expect, it } from 'vitest';
import { openTracing } from '../../runtime/tracing.js';
import type { SpanSink } from '../../runtime/tracing-export.js';

type KeyValue = { key: string; value: Record<string, string | number> };
const flat = (kvs: KeyValue[]) => (kvs.length ? kvs.flatMap((a) => [a.key, Object.values(a.value)[0]]) : null);

/** Spans as the export thread would get them (OTLP JSON lines), kept here instead (no thread, no collector). */
function captured() {
  const lines: string[] = [];
  const sink: SpanSink = { add: (l) => void lines.push(l), flush: async () => undefined, close: async () => undefined };
  const spans = () =>
    lines
      .map((l) => JSON.parse(l))
      .map((s) => ({
        traceId: s.traceId as string,
        spanId: s.spanId as string,
        parent: (s.parentSpanId ?? '') as string,
        remote: s.flags & 0x200 ? 1 : 0,
        flags: s.flags & 0xff,
        state: (s.traceState ?? '') as string,
        name: s.name as string,
        kind: s.kind - 1,
        attributes: flat(s.attributes),
        status: s.status.code as number,
        message: (s.status.message ?? '') as string,
        links: s.links.length ? [s.links[0].traceId, s.links[0].spanId, s.links[0].flags & 0xff] : null,
        events: s.events.length ? (s.events as Array<{ name: string; attributes: KeyValue[] }>).map((e) => [e.name, 0, flat(e.attributes)!] as const) : null,
      }));
  return { sink, spans };
}

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER = '00f067aa0ba902b7';
const SAMPLER_VARS = ['OTEL_TRACES_SAMPLER', 'OTEL_TRACES_SAMPLER_ARG'];
afterEach(() => {
  for (const k of SAMPLER_VARS) delete process.env[k];
});

/** One write's spans, as a POST makes them: the request, its command (and its append), the wait. */
async function write(tracing: ReturnType<typeof openTracing>, headers: Record<string, string> = {}) {
  const request = tracing.request('POST', headers);
  let kept: string | undefined;
  await request.span('command constituent', async (command) => {
    kept = command.traceparent();
    await command.span('append', async () => undefined);
  });
  await request.span('wait for read models', async () => undefined);
  request.end('/api/v1/constituents', 201);
  return { request, kept };
}

describe('spans on the main thread (decisions.md §15)', () => {
  it('are the request and its children, parented and named, continuing a sampled caller with its tracestate', async () => {
    const { sink, spans } = captured();
    const { request, kept } = await write(openTracing('t', { sink }), { traceparent: `00-${TRACE}-${CALLER}-01`, tracestate: 'vendor=x' });
    const all = spans();
    const named = (n: string) => all.find((s) => s.name === n)!;
    expect(all.map((s) => s.name).sort()).toEqual(['POST /api/v1/constituents', 'append', 'command constituent', 'wait for read models']);
    expect(all.every((s) => s.traceId === TRACE && s.flags === 1 && s.state === 'vendor=x')).toBe(true);
    const server = named('POST /api/v1/constituents');
    expect(server).toMatchObject({ parent: CALLER, remote: 1, kind: 1, spanId: request.spanId });
    expect(server.attributes).toEqual(['http.request.method', 'POST', 'http.route', '/api/v1/constituents', 'http.response.status_code', 201]);
    expect(named('command constituent')).toMatchObject({ parent: server.spanId, remote: 0, kind: 0 });
    expect(named('append').parent).toBe(named('command constituent').spanId);
    expect(named('wait for read models').parent).toBe(server.spanId);
    expect(kept).toBe(`00-${TRACE}-${named('command constituent').spanId}-01`);
  });

  it('records nothing under a caller that did not sample, yet has ids for the logs and hands on "not sampled"', async () => {
    const { sink, spans } = captured();
    const { request, kept } = await write(openTracing('t', { sink }), { traceparent: `00-${TRACE}-${CALLER}-00` });
    expect(spans()).toEqual([]);
    expect(request.traceId).toBe(TRACE);
    expect(request.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(kept).toBe(`00-${TRACE}-${request.spanId}-00`);
  });

  it('takes its sampler from OTEL_TRACES_SAMPLER as the SDK does, and says what it cannot use', async () => {
    process.env.OTEL_TRACES_SAMPLER = 'always_off';
    const off = captured();
    await write(openTracing('t', { sink: off.sink }));
    expect(off.spans()).toEqual([]);

    process.env.OTEL_TRACES_SAMPLER = 'traceidratio';
    process.env.OTEL_TRACES_SAMPLER_ARG = '7';
    const said: string[] = [];
    const ratio = captured();
    await write(openTracing('t', { sink: ratio.sink, warn: (m) => said.push(m) }));
    expect(ratio.spans()).toHaveLength(4);
    expect(said).toEqual(['tracing: OTEL_TRACES_SAMPLER_ARG 7 is out of [0, 1]; sampling every trace']);

    process.env.OTEL_TRACES_SAMPLER = 'sometimes';
    openTracing('t', { sink: captured().sink, warn: (m) => said.push(m) });
    expect(said.at(-1)).toBe('tracing: OTEL_TRACES_SAMPLER "sometimes" is not a sampler; using parentbased_always_on');
  });

  it('ends a child that threw in error, with the exception recorded, and passes the error on', async () => {
    const { sink, spans } = captured();
    const request = openTracing('t', { sink }).request('GET', {});
    await expect(request.span('command constituent', () => Promise.reject(new TypeError('no such field')))).rejects.toThrow('no such field');
    await expect(request.span('append', () => { throw new Error('sync'); })).rejects.toThrow('sync');
    const [failed] = spans();
    expect(failed).toMatchObject({ name: 'command constituent', status: 2, message: 'no such field', parent: request.spanId });
    expect(failed.events![0][0]).toBe('exception');
    expect(failed.events![0][2].slice(0, 4)).toEqual(['exception.type', 'TypeError', 'exception.message', 'no such field']);
    expect(spans()[1]).toMatchObject({ name: 'append', status: 2, message: 'sync' });
  });

  it('makes a webhook attempt a trace of its own, linked to the write, with the traceparent it sent', async () => {
    const { sink, spans } = captured();
    const tracing = openTracing('t', { sink });
    let sent = '';
    await tracing.attempt(`00-${TRACE}-${CALLER}-01`, { 'turnout.webhook.attempt': 1 }, async (tp) => {
      sent = tp;
      return { ok: false, responseStatus: 503, error: 'HTTP 503' };
    });
    const [attempt] = spans();
    expect(sent).toBe(`00-${attempt.traceId}-${attempt.spanId}-01`);
    expect(attempt.traceId).not.toBe(TRACE);
    expect(attempt).toMatchObject({ name: 'webhook attempt', kind: 2, parent: '', links: [TRACE, CALLER, 1], status: 2, message: 'HTTP 503' });
    expect(attempt.attributes).toEqual(['http.request.method', 'POST', 'turnout.webhook.attempt', 1, 'http.response.status_code', 503]);
  });
});
