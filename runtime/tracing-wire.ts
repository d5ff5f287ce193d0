/**
 * A finished span as the export thread (tracing-thread.ts) reads it, to make it the SDK's
 * ReadableSpan and export it over OTLP/HTTP. It crosses from the main thread as one line of text
 * (spanLine), a batch of them as one string: cloning a string is a copy of its bytes, where
 * cloning a batch of arrays walked every value of every span, about 3 µs of the main thread's
 * time a span, more than making the span.
 */
export type SpanRecord = [
  traceId: string,
  spanId: string,
  /** '' for a root span. */
  parentSpanId: string,
  /** 1 when the parent came from another process (an incoming `traceparent`). */
  parentRemote: 0 | 1,
  traceFlags: number,
  /** The W3C `tracestate` the trace arrived with, '' for none. */
  traceState: string,
  name: string,
  /** SpanKind of @opentelemetry/api. */
  kind: number,
  /** Epoch milliseconds (performance.timeOrigin + performance.now()). */
  start: number,
  end: number,
  /** Keys and values alternating; null for none. */
  attributes: Array<string | number> | null,
  /** SpanStatusCode of @opentelemetry/api. */
  status: number,
  statusMessage: string,
  /** Linked spans' trace id, span id and trace flags, in threes; null for none. */
  links: Array<string | number> | null,
  /** Events (an exception recorded): name, epoch milliseconds, attributes as above. */
  events: Array<[string, number, Array<string | number>]> | null,
];

/**
 * The line of a finished span: the fixed fields tab-separated (ids and the tracestate never hold
 * a tab or a newline), then the name and the rest as JSON, which escapes whatever they hold.
 */
export function spanLine(
  traceId: string,
  spanId: string,
  parentSpanId: string,
  parentRemote: 0 | 1,
  traceFlags: number,
  traceState: string,
  kind: number,
  start: number,
  end: number,
  name: string,
  attributes: SpanRecord[10],
  status: number,
  statusMessage: string,
  links: SpanRecord[13],
  events: SpanRecord[14],
): string {
  // A child span has a name alone; the rest is written only when a span has any of it.
  const rest = attributes || status || links || events ? JSON.stringify([name, attributes, status, statusMessage, links, events]) : JSON.stringify(name);
  return `${traceId}\t${spanId}\t${parentSpanId}\t${parentRemote}\t${traceFlags}\t${traceState}\t${kind}\t${start}\t${end}\t${rest}`;
}

/** A span line read back (the export thread). */
export function readSpanLine(line: string): SpanRecord {
  const [traceId, spanId, parentSpanId, remote, flags, traceState, kind, start, end, json] = line.split('\t');
  const rest = JSON.parse(json) as string | [string, SpanRecord[10], number, string, SpanRecord[13], SpanRecord[14]];
  const [name, attributes, status, statusMessage, links, events] = typeof rest === 'string' ? [rest, null, 0, '', null, null] : rest;
  return [traceId, spanId, parentSpanId, remote === '1' ? 1 : 0, Number(flags), traceState, name, Number(kind), Number(start), Number(end), attributes, status, statusMessage, links, events];
}

/** What the export thread starts with. */
export interface ExportThreadSettings {
  version: string;
}

export type ToExportThread = { type: 'spans'; lines: string } | { type: 'flush'; id: number } | { type: 'close'; id: number };

export type FromExportThread = { type: 'done'; id: number; error?: string };
