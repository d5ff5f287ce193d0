/**
 * A finished span as the main thread hands it to the export thread (tracing-thread.ts), which
 * makes it the SDK's ReadableSpan and exports it over OTLP/HTTP. Plain values only: a batch of
 * these crosses to the thread in one message, cloned without any object of the SDK's.
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

export type ToExportThread = { type: 'spans'; spans: SpanRecord[] } | { type: 'flush'; id: number } | { type: 'close'; id: number };

export type FromExportThread = { type: 'done'; id: number; error?: string };
