import type { Resource } from '@opentelemetry/resources';
import type { SpanRecord } from './tracing-wire.js';

/**
 * OTLP/HTTP's JSON encoding of a batch of spans, each already written as its OTLP JSON (spanJson,
 * on the main thread as it ends): the export thread only wraps them in the request's envelope.
 */
export function otlpTraceRequest(spans: string[], resource: string, scope: string): Uint8Array {
  return Buffer.from(`{"resourceSpans":[{"resource":${resource},"scopeSpans":[{"scope":${scope},"spans":[${spans.join(',')}]}]}]}`, 'utf8');
}

/** A resource as OTLP JSON, once per thread. */
export const resourceJson = (resource: Resource) => JSON.stringify({ attributes: keyValues(resource.attributes), droppedAttributesCount: 0, ...(resource.schemaUrl ? { schemaUrl: resource.schemaUrl } : {}) });

/** The span's 32-bit flags in OTLP: the W3C trace flags, and whether the parent's remoteness is known (always) and true. */
const flagsOf = (traceFlags: number, remote: boolean) => (traceFlags & 0xff) | 0x100 | (remote ? 0x200 : 0);

/**
 * One span in OTLP/HTTP's JSON encoding: the document the SDK's JsonTraceSerializer makes of its
 * ReadableSpan (ids in hex, times as decimal strings of nanoseconds, kinds shifted by one,
 * attributes as AnyValues), written in one template. Never holds a raw newline (JSON escapes
 * them), so a batch crosses to the export thread as one string of lines. Written straight from
 * the span's fields, there is no ReadableSpan, OTLP object tree or BigInt per timestamp in
 * between: the SDK's path took about 9 µs a span, and parsing a span's fields back on the export
 * thread to write this there cost about as much again as writing it here.
 */
export function spanJson(
  ...[traceId, spanId, parentSpanId, parentRemote, traceFlags, traceState, name, kind, start, end, attributes, status, statusMessage, links, events]: SpanRecord
): string {
  let linked = '';
  if (links)
    for (let i = 0; i < links.length; i += 3)
      linked += `${i ? ',' : ''}{"attributes":[],"spanId":"${links[i + 1]}","traceId":"${links[i]}","droppedAttributesCount":0,"flags":${flagsOf(links[i + 2] as number, true)}}`;
  const timed = events ? events.map(([n, at, a]) => `{"attributes":${pairsJson(a)},"name":${JSON.stringify(n)},"timeUnixNano":"${nanos(at)}","droppedAttributesCount":0}`).join(',') : '';
  return (
    `{"traceId":"${traceId}","spanId":"${spanId}",${parentSpanId ? `"parentSpanId":"${parentSpanId}",` : ''}${traceState ? `"traceState":${JSON.stringify(traceState)},` : ''}` +
    `"name":${JSON.stringify(name)},"kind":${kind + 1},"startTimeUnixNano":"${nanos(start)}","endTimeUnixNano":"${nanos(end)}",` +
    `"attributes":${pairsJson(attributes)},"droppedAttributesCount":0,"events":[${timed}],"droppedEventsCount":0,` +
    `"status":${statusMessage ? `{"code":${status},"message":${JSON.stringify(statusMessage)}}` : `{"code":${status}}`},` +
    `"links":[${linked}],"droppedLinksCount":0,"flags":${flagsOf(traceFlags, parentRemote === 1)}}`
  );
}

/** Epoch milliseconds (a float) as a decimal string of nanoseconds, exact to the microsecond without a BigInt. */
export function nanos(ms: number): string {
  let s = Math.floor(ms / 1000);
  let ns = Math.round((ms - s * 1000) * 1e6);
  if (ns >= 1e9) {
    s += 1;
    ns -= 1e9;
  }
  return s ? `${s}${String(ns).padStart(9, '0')}` : String(ns);
}

function pairsJson(pairs: Array<string | number> | null): string {
  if (!pairs) return '[]';
  const out: string[] = [];
  for (let i = 0; i < pairs.length; i += 2) {
    const v = pairs[i + 1];
    const value = typeof v === 'string' ? `{"stringValue":${JSON.stringify(v)}}` : JSON.stringify(anyValue(v));
    out.push(`{"key":${JSON.stringify(pairs[i])},"value":${value}}`);
  }
  return `[${out.join(',')}]`;
}

const keyValues = (attributes: Record<string, unknown>) => Object.entries(attributes).map(([key, value]) => ({ key, value: anyValue(value) }));

/** toAnyValue of @opentelemetry/otlp-transformer, for JSON. */
function anyValue(value: unknown): Record<string, unknown> {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'number') return Number.isInteger(value) ? { intValue: value } : { doubleValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (value instanceof Uint8Array) return { bytesValue: Buffer.from(value).toString('base64') };
  if (Array.isArray(value)) return { arrayValue: { values: value.map(anyValue) } };
  if (value !== null && typeof value === 'object') return { kvlistValue: { values: keyValues(value as Record<string, unknown>) } };
  return {};
}
