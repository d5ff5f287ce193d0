import {
  type Context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { AttemptResult, RequestSpan, Tracing } from './tracing-port.js';

/**
 * The OpenTelemetry SDK behind the Tracing port: spans exported over OTLP/HTTP (JSON) to
 * OTEL_EXPORTER_OTLP_ENDPOINT, configured by the standard OTEL_* variables (service name and
 * resource attributes, headers, sampler, batch sizes). Loaded by startTracing (tracing-start.ts)
 * only when the endpoint is set.
 *
 * Nothing is registered globally: the context manager and tracer belong to this instance, so a
 * process (or a test) may open and close runtimes without one's tracing leaking into the next.
 */
export function openTracing(version: string): Tracing {
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': 'turnout', 'service.version': version }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  const tracer = provider.getTracer('turnout', version);
  const contexts = new AsyncLocalStorageContextManager().enable();
  const propagator = new W3CTraceContextPropagator();

  const traceparentOf = (ctx: Context): string | undefined => {
    const carrier: Record<string, string> = {};
    propagator.inject(ctx, carrier, defaultTextMapSetter);
    return carrier.traceparent;
  };

  const finish = (span: Span, err?: unknown) => {
    if (err !== undefined) {
      span.recordException(err instanceof Error ? err : String(err));
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    }
    span.end();
  };

  return {
    request(method, headers) {
      const parent = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
      const span = tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } }, parent);
      const ctx = trace.setSpan(parent, span);
      const { traceId, spanId } = span.spanContext();
      return {
        traceId,
        spanId,
        run: (fn) => contexts.with(ctx, fn),
        end(route, status) {
          // OpenTelemetry's HTTP conventions: named by method and route pattern (the method alone
          // without a route: the path is not bounded).
          if (route) span.updateName(`${method} ${route}`).setAttribute('http.route', route);
          span.setAttribute('http.response.status_code', status);
          if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        },
      } satisfies RequestSpan;
    },

    async span(name, fn) {
      const parent = contexts.active();
      const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL }, parent);
      try {
        const r = await contexts.with(trace.setSpan(parent, span), fn);
        finish(span);
        return r;
      } catch (err) {
        finish(span, err);
        throw err;
      }
    },

    traceparent: () => traceparentOf(contexts.active()),

    async attempt<R extends AttemptResult>(cause: string | undefined, attributes: Record<string, string | number>, fn: (traceparent: string) => Promise<R>): Promise<R> {
      // A new trace per attempt, linked to the write: an attempt may come hours after it, by a
      // retry, and a trace that stays open that long is no use to anyone reading it.
      const caused = cause ? trace.getSpanContext(propagator.extract(ROOT_CONTEXT, { traceparent: cause }, defaultTextMapGetter)) : undefined;
      const links: Link[] = caused ? [{ context: caused }] : [];
      const span = tracer.startSpan('webhook attempt', { kind: SpanKind.CLIENT, links, attributes: { 'http.request.method': 'POST', ...attributes } }, ROOT_CONTEXT);
      try {
        const r = await fn(traceparentOf(trace.setSpan(ROOT_CONTEXT, span))!);
        if (r.responseStatus !== null) span.setAttribute('http.response.status_code', r.responseStatus);
        if (!r.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: r.error ?? 'failed' });
        finish(span);
        return r;
      } catch (err) {
        finish(span, err);
        throw err;
      }
    },

    flush: () => provider.forceFlush(),

    async close() {
      contexts.disable();
      await provider.shutdown();
    },
  };
}
