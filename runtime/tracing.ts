import {
  type Context,
  defaultTextMapGetter,
  type Link,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { TraceHooks } from '../commands/context.js';
import type { AttemptResult, RequestSpan, Tracing } from './tracing-port.js';

/**
 * The OpenTelemetry SDK behind the Tracing port: spans exported over OTLP/HTTP (JSON) to
 * OTEL_EXPORTER_OTLP_ENDPOINT, configured by the standard OTEL_* variables (service name and
 * resource attributes, headers, sampler, batch sizes). Loaded by startTracing (tracing-start.ts)
 * only when the endpoint is set. (`exporter` replaces the OTLP one for the cost bench, which
 * times the spans without their export.)
 *
 * Nothing is registered globally, and there is no context manager: each span's children are
 * started from it explicitly (SpanHooks), carried on the request and the WriteContext. An
 * AsyncLocalStorage context manager would turn on Node's promise hooks for every promise the
 * process makes, traced or not, and that alone cost more than the spans (docs/bench.md).
 */
export function openTracing(version: string, options: { exporter?: SpanExporter } = {}): Tracing {
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': 'turnout', 'service.version': version }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(options.exporter ?? new OTLPTraceExporter())] });
  const tracer = provider.getTracer('turnout', version);
  const propagator = new W3CTraceContextPropagator();

  return {
    request(method, headers) {
      const parent = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
      const span = tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } }, parent);
      return new ServerSpan(tracer, span, parent, method);
    },

    async attempt<R extends AttemptResult>(cause: string | undefined, attributes: Record<string, string | number>, fn: (traceparent: string) => Promise<R>): Promise<R> {
      // A new trace per attempt, linked to the write: an attempt may come hours after it, by a
      // retry, and a trace that stays open that long is no use to anyone reading it.
      const caused = cause ? trace.getSpanContext(propagator.extract(ROOT_CONTEXT, { traceparent: cause }, defaultTextMapGetter)) : undefined;
      const links: Link[] = caused ? [{ context: caused }] : [];
      const span = tracer.startSpan('webhook attempt', { kind: SpanKind.CLIENT, links, attributes: { 'http.request.method': 'POST', ...attributes } }, ROOT_CONTEXT);
      try {
        const r = await fn(traceparentOf(span.spanContext()));
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
    close: () => provider.shutdown(),
  };
}

/** W3C `traceparent` of a span (what W3CTraceContextPropagator.inject writes, without a carrier). */
const traceparentOf = (c: SpanContext) => `00-${c.traceId}-${c.spanId}-0${Number(c.traceFlags).toString(16)}`;

function finish(span: Span, err?: unknown) {
  if (err !== undefined) {
    span.recordException(err instanceof Error ? err : String(err));
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  }
  span.end();
}

const INTERNAL = { kind: SpanKind.INTERNAL };

/** One span's hooks: what it starts is its child, and what it gives a write is its traceparent. */
class SpanHooks implements TraceHooks {
  #context?: Context;
  #traceparent?: string;

  constructor(
    protected readonly tracer: Tracer,
    protected readonly self: Span,
    private readonly parent: Context,
  ) {}

  span<T>(name: string, fn: (trace: TraceHooks) => Promise<T>): Promise<T> {
    // A span the sampler dropped has no recorded children either (every standard sampler
    // decides by the parent or the trace id): no span work at all below it.
    if (!this.self.isRecording()) return call(fn, this);
    this.#context ??= trace.setSpan(this.parent, this.self);
    const child = this.tracer.startSpan(name, INTERNAL, this.#context);
    return call(fn, new SpanHooks(this.tracer, child, this.#context)).then(
      (r) => {
        child.end();
        return r;
      },
      (err: unknown) => {
        finish(child, err);
        throw err;
      },
    );
  }

  traceparent(): string {
    return (this.#traceparent ??= traceparentOf(this.self.spanContext()));
  }
}

/** A request's server span, continuing the caller's trace when it sent a `traceparent`. */
class ServerSpan extends SpanHooks implements RequestSpan {
  readonly traceId: string;
  readonly spanId: string;

  constructor(tracer: Tracer, self: Span, parent: Context, private readonly method: string) {
    super(tracer, self, parent);
    ({ traceId: this.traceId, spanId: this.spanId } = self.spanContext());
  }

  end(route: string | null, status: number): void {
    // OpenTelemetry's HTTP conventions: named by method and route pattern (the method alone
    // without a route: the path is not bounded).
    if (route) this.self.updateName(`${this.method} ${route}`).setAttribute('http.route', route);
    this.self.setAttribute('http.response.status_code', status);
    if (status >= 500) this.self.setStatus({ code: SpanStatusCode.ERROR });
    this.self.end();
  }
}

/** `fn(hooks)`, a synchronous throw turned into a rejection as an async function's would be. */
function call<T>(fn: (trace: TraceHooks) => Promise<T>, hooks: TraceHooks): Promise<T> {
  try {
    return fn(hooks);
  } catch (err) {
    return Promise.reject(err);
  }
}
