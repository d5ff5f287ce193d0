/*
 * The span export thread (tracing-export.ts starts it): the spans the main thread finished, made
 * the SDK's ReadableSpans here and handed to its BatchSpanProcessor and OTLP/HTTP exporter, which
 * read their standard OTEL_* variables (batch sizes and delay, endpoint, headers, timeout) from
 * the environment the thread was started with. Building the OTLP request, serialising it and
 * sending it is the bulk of a span's cost, and none of it runs on the main thread's event loop.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type HrTime, type Link, SpanKind, type SpanContext, TraceFlags } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type ReadableSpan, type TimedEvent } from '@opentelemetry/sdk-trace-base';
import type { ExportThreadSettings, FromExportThread, SpanRecord, ToExportThread } from './tracing-wire.js';

if (!parentPort) throw new Error('tracing-thread runs as a worker thread (tracing-export.ts)');
const port = parentPort;
const { version } = workerData as ExportThreadSettings;

const resource = defaultResource()
  .merge(resourceFromAttributes({ 'service.name': 'turnout', 'service.version': version }))
  .merge(detectResources({ detectors: [envDetector] }));
const scope = { name: 'turnout', version };
const processor = new BatchSpanProcessor(new OTLPTraceExporter());

/** Epoch milliseconds as the SDK's [seconds, nanoseconds]. */
function hr(ms: number): HrTime {
  const s = Math.floor(ms / 1000);
  return [s, Math.round((ms - s * 1000) * 1e6)];
}

function attributesOf(pairs: Array<string | number> | null): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  if (pairs) for (let i = 0; i < pairs.length; i += 2) out[pairs[i] as string] = pairs[i + 1];
  return out;
}

function readable(r: SpanRecord): ReadableSpan {
  const [traceId, spanId, parentSpanId, parentRemote, traceFlags, state, name, kind, start, end, attributes, status, statusMessage, links, events] = r;
  const traceState = state ? new TraceState(state) : undefined;
  const context: SpanContext = { traceId, spanId, traceFlags, ...(traceState ? { traceState } : {}) };
  const linked: Link[] = [];
  if (links) for (let i = 0; i < links.length; i += 3) linked.push({ context: { traceId: links[i] as string, spanId: links[i + 1] as string, traceFlags: links[i + 2] as number } });
  const timed: TimedEvent[] = (events ?? []).map(([n, at, a]) => ({ name: n, time: hr(at), attributes: attributesOf(a) }));
  return {
    name,
    kind: kind as SpanKind,
    spanContext: () => context,
    parentSpanContext: parentSpanId ? { traceId, spanId: parentSpanId, traceFlags, isRemote: parentRemote === 1 } : undefined,
    startTime: hr(start),
    endTime: hr(end),
    duration: hr(end - start),
    ended: true,
    status: statusMessage ? { code: status, message: statusMessage } : { code: status },
    attributes: attributesOf(attributes),
    links: linked,
    events: timed,
    resource,
    instrumentationScope: scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

const answer = (id: number, done: Promise<void>) =>
  done.then(
    () => port.postMessage({ type: 'done', id } satisfies FromExportThread),
    (err: unknown) => port.postMessage({ type: 'done', id, error: String(err) } satisfies FromExportThread),
  );

port.on('message', (m: ToExportThread) => {
  if (m.type === 'spans') {
    // Only sampled spans are ever sent here; the processor checks the flag all the same.
    for (const r of m.spans) if (r[4] & TraceFlags.SAMPLED) processor.onEnd(readable(r));
  } else if (m.type === 'flush') void answer(m.id, processor.forceFlush());
  else void answer(m.id, processor.shutdown()).then(() => port.close());
});
