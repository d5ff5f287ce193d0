/*
 * The span export thread (tracing-export.ts starts it): the lines of the spans the main thread
 * finished, batched by the SDK's BatchSpanProcessor and sent by its OTLP/HTTP exporter, which read
 * their standard OTEL_* variables (batch sizes and delay, endpoint, headers, timeout) from the
 * environment the thread was started with. Building the OTLP request, serialising it and
 * sending it is the bulk of a span's cost, and none of it runs on the main thread's event loop.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { TraceFlags } from '@opentelemetry/api';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { type IExportTraceServiceResponse, JsonTraceSerializer, TraceExporterMetricsHelper } from '@opentelemetry/otlp-transformer';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { otlpTraceRequest, resourceJson } from './tracing-otlp.js';
import type { ExportThreadSettings, FromExportThread, ToExportThread } from './tracing-wire.js';

if (!parentPort) throw new Error('tracing-thread runs as a worker thread (tracing-export.ts)');
const port = parentPort;
const { version } = workerData as ExportThreadSettings;

const resource = defaultResource()
  .merge(resourceFromAttributes({ 'service.name': 'turnout', 'service.version': version }))
  .merge(detectResources({ detectors: [envDetector] }));
const resourceText = resourceJson(resource);
const scopeText = JSON.stringify({ name: 'turnout', version });

/**
 * A span line as the BatchSpanProcessor sees a span: it asks only a span's trace flags (every
 * line is of a sampled span) and its resource, and hands the batch on to the exporter as it is.
 */
interface Queued {
  line: string;
  spanContext(): { traceFlags: number };
  resource: typeof resource;
}
const SAMPLED = () => ({ traceFlags: TraceFlags.SAMPLED });

/**
 * The SDK's OTLP/HTTP exporter, as OTLPTraceExporter builds it (its endpoint, headers, timeout,
 * compression and retries from the OTEL_EXPORTER_OTLP_* variables), with a serialiser that writes
 * the JSON straight from the lines (tracing-otlp.ts).
 */
const exporter = new OTLPExporterBase<Queued[]>(
  createOtlpHttpExportDelegate(
    convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': 'application/json' }),
    {
      serializeRequest: (batch: Queued[]) => otlpTraceRequest(batch.map((q) => q.line), resourceText, scopeText),
      deserializeResponse: (body: Uint8Array): IExportTraceServiceResponse => JsonTraceSerializer.deserializeResponse(body),
    },
    'otlp_http_span_exporter',
    TraceExporterMetricsHelper as never,
    undefined,
  ),
);
// The standard batching (OTEL_BSP_* variables: queue, batch size, delay, timeout) over the lines.
const processor = new BatchSpanProcessor(exporter as never);

const answer = (id: number, done: Promise<void>) =>
  done.then(
    () => port.postMessage({ type: 'done', id } satisfies FromExportThread),
    (err: unknown) => port.postMessage({ type: 'done', id, error: String(err) } satisfies FromExportThread),
  );

port.on('message', (m: ToExportThread) => {
  if (m.type === 'spans') for (const line of m.lines.split('\n')) processor.onEnd({ line, spanContext: SAMPLED, resource } satisfies Queued as unknown as ReadableSpan);
  else if (m.type === 'flush') void answer(m.id, processor.forceFlush());
  else void answer(m.id, processor.shutdown()).then(() => port.close());
});
