/**
 * A finished span's fields in order, as tracing.ts keeps them and tracing-otlp.ts spanJson takes them. A
 * span crosses to the export thread as that JSON, a batch of them as one string of lines: cloning
 * a string is a copy of its bytes, where cloning a batch of arrays walked every value of every
 * span, about 3 µs of the main thread's time a span, more than making the span.
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

/** What the export thread starts with. */
export interface ExportThreadSettings {
  version: string;
}

/** `lines`: spans' OTLP JSON (tracing-otlp.ts spanJson), one a line. */
export type ToExportThread = { type: 'spans'; lines: string } | { type: 'flush'; id: number } | { type: 'close'; id: number };

export type FromExportThread = { type: 'done'; id: number; error?: string };
