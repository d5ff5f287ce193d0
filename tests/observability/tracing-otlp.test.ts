import { type Link, SpanKind, SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { nanos, otlpTraceRequest, resourceJson, spanJson } from '../../runtime/tracing-otlp.js';
import type { SpanRecord } from '../../runtime/tracing-wire.js';

const resource = resourceFromAttributes({ 'service.name': 'turnout', 'service.version': '1.2.3', 'host.cores': 2, 'x.ratio': 0.5, 'x.on': true, 'x.list': ['a', 'b'] });
const scope = { name: 'turnout', version: '1.2.3' };

// Spans of every shape the product sends: a server span continuing a remote parent (with a
// tracestate), a child, a failed child with an exception event and a webhook attempt with a link.
const records: SpanRecord[] = [
  ['4bf92f3577b34da6a3ce929d0e0e4736', 'a1a1a1a1a1a1a1a1', '00f067aa0ba902b7', 1, 1, 'vendor=x,other=y', 'POST /api/v1/constituents', SpanKind.SERVER, 1764237000123.5, 1764237000127.25, ['http.request.method', 'POST', 'http.route', '/api/v1/constituents', 'http.response.status_code', 201], 0, '', null, null],
  ['4bf92f3577b34da6a3ce929d0e0e4736', 'b2b2b2b2b2b2b2b2', 'a1a1a1a1a1a1a1a1', 0, 1, '', 'append', SpanKind.INTERNAL, 1764237000124, 1764237000125.75, null, 0, '', null, null],
  ['5bf92f3577b34da6a3ce929d0e0e4736', 'c3c3c3c3c3c3c3c3', 'a1a1a1a1a1a1a1a1', 0, 1, '', 'command "quoted"\ttab', SpanKind.INTERNAL, 1764237000124, 1764237001000, null, SpanStatusCode.ERROR, 'it failed:\nsecond line', null, [['exception', 1764237000999.5, ['exception.type', 'Error', 'exception.message', 'it failed:\nsecond line']]]],
  ['6bf92f3577b34da6a3ce929d0e0e4736', 'd4d4d4d4d4d4d4d4', '', 0, 1, '', 'webhook attempt', SpanKind.CLIENT, 1764237999999.75, 1764238000000.5, ['http.request.method', 'POST', 'turnout.webhook.attempt', 2, 'http.response.status_code', 200], 0, '', ['4bf92f3577b34da6a3ce929d0e0e4736', 'b2b2b2b2b2b2b2b2', 1], null],
];

const hr = (ms: number): [number, number] => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];
const attrs = (pairs: Array<string | number> | null) => Object.fromEntries(Array.from({ length: (pairs?.length ?? 0) / 2 }, (_, i) => [pairs![2 * i], pairs![2 * i + 1]]));

/** The same span as the SDK's own ReadableSpan, for its JsonTraceSerializer. */
function readable([traceId, spanId, parent, remote, flags, state, name, kind, start, end, attributes, status, message, links, events]: SpanRecord): ReadableSpan {
  const traceState = state ? new TraceState(state) : undefined;
  const linked: Link[] = links ? [{ context: { traceId: links[0] as string, spanId: links[1] as string, traceFlags: links[2] as number, isRemote: true } }] : [];
  return {
    name,
    kind,
    spanContext: () => ({ traceId, spanId, traceFlags: flags, traceState }),
    parentSpanContext: parent ? { traceId, spanId: parent, traceFlags: flags, isRemote: remote === 1 } : undefined,
    startTime: hr(start),
    endTime: hr(end),
    duration: [0, 0],
    ended: true,
    status: message ? { code: status, message } : { code: status },
    attributes: attrs(attributes),
    links: linked,
    events: (events ?? []).map(([n, at, a]) => ({ name: n, time: hr(at), attributes: attrs(a) })),
    resource,
    instrumentationScope: scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

const parse = (bytes: Uint8Array) => JSON.parse(Buffer.from(bytes).toString('utf8'));

describe('the OTLP JSON written straight from a span\'s fields', () => {
  it('is the document the SDK serialises from the same spans', () => {
    const lines = records.map((r) => spanJson(...r));
    // One line each: a batch crosses to the export thread as one string of lines.
    expect(lines.every((l) => !l.includes('\n'))).toBe(true);
    const ours = parse(otlpTraceRequest(lines, resourceJson(resource), JSON.stringify(scope)));
    const sdks = parse(JsonTraceSerializer.serializeRequest(records.map(readable))!);
    expect(ours).toEqual(sdks);
    expect(ours.resourceSpans[0].scopeSpans[0].spans[0].flags).toBe(TraceFlags.SAMPLED | 0x300);
  });

  it('writes nanoseconds exactly where the milliseconds carry them, across a second boundary too', () => {
    expect(nanos(1764237000123.5)).toBe('1764237000123500000');
    expect(nanos(1764237000999.9999999)).toBe('1764237001000000000');
    expect(nanos(0.25)).toBe('250000');
  });
});
