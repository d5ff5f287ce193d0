import { type Attributes, type Link, ROOT_CONTEXT, type SpanContext, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { getNumberFromEnv, getStringFromEnv, parseTraceParent, TraceState } from '@opentelemetry/core';
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, RandomIdGenerator, type Sampler, SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import type { TraceHooks } from '../commands/context.js';
import { exportThread, type SpanSink } from './tracing-export.js';
import type { AttemptResult, RequestSpan, Tracing } from './tracing-port.js';
import { spanJson } from './tracing-otlp.js';
import type { SpanRecord } from './tracing-wire.js';

/**
 * OpenTelemetry spans behind the Tracing port, exported over OTLP/HTTP (JSON) to
 * OTEL_EXPORTER_OTLP_ENDPOINT and configured by the standard OTEL_* variables (sampler, service
 * name and resource attributes, headers, batch sizes). Loaded by startTracing (tracing-start.ts)
 * only when the endpoint is set.
 *
 * The main thread does the least a span needs: its ids (the SDK's generator), the sampler's
 * decision (the SDK's samplers, once per trace), its times, and at its end its OTLP JSON,
 * one line of text (tracing-otlp.ts). The SDK's BatchSpanProcessor and OTLP/HTTP export run on a
 * thread of their own (tracing-thread.ts), which batches the lines and sends them. With the
 * SDK's spans and all of that on the main thread a traced write cost the event loop about 60 µs more than an
 * untraced one, a quarter of its throughput; the export alone (the OTLP request built and
 * serialised, the HTTP request) was more than half of it (docs/bench.md).
 *
 * There is no context manager either: each span's children are started from it explicitly,
 * carried on the request and the WriteContext. An AsyncLocalStorage context manager would turn
 * on Node's promise hooks for every promise the process makes, traced or not.
 */
export function openTracing(version: string, options: { sink?: SpanSink; warn?: (message: string) => void } = {}): Tracing {
  const warn = options.warn ?? ((m: string) => console.warn(m));
  const sampler = samplerFromEnv(warn);
  const ids = new RandomIdGenerator();
  const sink = options.sink ?? exportThread(version, warn);
  const out: Out = { sink, spanId: ids.generateSpanId };

  return {
    request(method, headers) {
      const parent = remoteParent(headers);
      const traceId = parent?.traceId ?? ids.generateTraceId();
      const flags = decide(sampler, parent, traceId, method, SpanKind.SERVER, { 'http.request.method': method }, []);
      const state = parent?.traceState ? parent.traceState.serialize() : '';
      return new ServerSpan(out, traceId, parent?.spanId ?? '', parent ? 1 : 0, flags, state, method);
    },

    async attempt<R extends AttemptResult>(cause: string | undefined, attributes: Record<string, string | number>, fn: (traceparent: string) => Promise<R>): Promise<R> {
      // A new trace per attempt, linked to the write: an attempt may come hours after it, by a
      // retry, and a trace that stays open that long is no use to anyone reading it.
      const caused = cause ? parseTraceParent(cause) : null;
      const links: Link[] = caused ? [{ context: { ...caused, isRemote: true } }] : [];
      const all: Attributes = { 'http.request.method': 'POST', ...attributes };
      const traceId = ids.generateTraceId();
      const flags = decide(sampler, null, traceId, 'webhook attempt', SpanKind.CLIENT, all, links);
      const span = new Span(out, traceId, '', 0, flags, '', 'webhook attempt', SpanKind.CLIENT, pairs(all), caused ? [caused.traceId, caused.spanId, caused.traceFlags] : null);
      try {
        const r = await fn(span.traceparent());
        if (r.responseStatus !== null) span.attribute('http.response.status_code', r.responseStatus);
        if (!r.ok) span.error(r.error ?? 'failed');
        span.end();
        return r;
      } catch (err) {
        span.fail(err);
        throw err;
      }
    },

    flush: () => sink.flush(),
    close: () => sink.close(),
  };
}

/** What every span of one Tracing shares: where it goes when it ends, and its ids' source. */
interface Out {
  sink: SpanSink;
  spanId: () => string;
}

/** The span context an incoming W3C `traceparent` (and `tracestate`) names, as W3CTraceContextPropagator extracts it. */
function remoteParent(headers: Record<string, string | string[] | undefined>): SpanContext | null {
  const header = headers.traceparent;
  if (!header) return null;
  const context = parseTraceParent(Array.isArray(header) ? header[0] : header);
  if (!context) return null;
  const state = headers.tracestate;
  // Several tracestate headers are one list, as the propagator merges them; TraceState parses and bounds it.
  return state ? { ...context, isRemote: true, traceState: new TraceState(Array.isArray(state) ? state.join(',') : state) } : { ...context, isRemote: true };
}

/** The span's trace flags by the sampler's decision: sampled or not at all (a span recorded but not sampled is never exported). */
function decide(sampler: Sampler, parent: SpanContext | null, traceId: string, name: string, kind: SpanKind, attributes: Attributes, links: Link[]): number {
  const context = parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
  return sampler.shouldSample(context, traceId, name, kind, attributes, links).decision === SamplingDecision.RECORD_AND_SAMPLED ? TraceFlags.SAMPLED : TraceFlags.NONE;
}

/** The sampler OTEL_TRACES_SAMPLER (and _ARG) name, as the SDK's tracer provider builds it. */
export function samplerFromEnv(warn: (message: string) => void): Sampler {
  const name = getStringFromEnv('OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on';
  const ratio = () => {
    const r = getNumberFromEnv('OTEL_TRACES_SAMPLER_ARG');
    if (r !== undefined && r >= 0 && r <= 1) return r;
    warn(`tracing: OTEL_TRACES_SAMPLER_ARG ${r === undefined ? 'is not set' : `${r} is out of [0, 1]`}; sampling every trace`);
    return 1;
  };
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio());
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio()) });
    default:
      if (name !== 'parentbased_always_on') warn(`tracing: OTEL_TRACES_SAMPLER "${name}" is not a sampler; using parentbased_always_on`);
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

const pairs = (attributes: Attributes) => Object.entries(attributes).flat() as Array<string | number>;
const now = () => performance.timeOrigin + performance.now();

/**
 * One span and its hooks: what it starts is its child, and what it gives a write is its
 * traceparent. Not sampled, it still has its ids (the log lines carry them, the traceparent it
 * hands on says "not sampled"), but records nothing and starts no children: every standard
 * sampler decides a child as its parent or by the trace id, so they would not be sampled either.
 */
class Span implements TraceHooks {
  readonly spanId: string;
  #traceparent?: string;
  readonly #start = now();
  #status: number = SpanStatusCode.UNSET;
  #message = '';
  #events: SpanRecord[14] = null;

  constructor(
    private readonly out: Out,
    readonly traceId: string,
    private readonly parentSpanId: string,
    private readonly parentRemote: 0 | 1,
    private readonly flags: number,
    private readonly state: string,
    protected name: string,
    private readonly kind: SpanKind,
    private attributes: Array<string | number> | null,
    private readonly links: Array<string | number> | null,
  ) {
    this.spanId = out.spanId();
  }

  span<T>(name: string, fn: (trace: TraceHooks) => Promise<T>): Promise<T> {
    if (!(this.flags & TraceFlags.SAMPLED)) return call(fn, this);
    const child = new Span(this.out, this.traceId, this.spanId, 0, this.flags, this.state, name, SpanKind.INTERNAL, null, null);
    return call(fn, child).then(
      (r) => {
        child.end();
        return r;
      },
      (err: unknown) => {
        child.fail(err);
        throw err;
      },
    );
  }

  traceparent(): string {
    return (this.#traceparent ??= `00-${this.traceId}-${this.spanId}-0${this.flags.toString(16)}`);
  }

  attribute(key: string, value: string | number): void {
    (this.attributes ??= []).push(key, value);
  }

  error(message?: string): void {
    this.#status = SpanStatusCode.ERROR;
    this.#message = message ?? '';
  }

  /** An exception recorded as the SDK's Span.recordException does, then the span ended in error. */
  fail(err: unknown): void {
    const attributes = err instanceof Error ? ['exception.type', err.name, 'exception.message', err.message, ...(err.stack ? ['exception.stacktrace', err.stack] : [])] : ['exception.message', String(err)];
    (this.#events ??= []).push(['exception', now(), attributes]);
    this.error(err instanceof Error ? err.message : String(err));
    this.end();
  }

  end(): void {
    if (!(this.flags & TraceFlags.SAMPLED)) return;
    this.out.sink.add(spanJson(this.traceId, this.spanId, this.parentSpanId, this.parentRemote, this.flags, this.state, this.name, this.kind, this.#start, now(), this.attributes, this.#status, this.#message, this.links, this.#events));
  }
}

/** A request's server span, continuing the caller's trace when it sent a `traceparent`. */
class ServerSpan extends Span implements RequestSpan {
  constructor(out: Out, traceId: string, parentSpanId: string, parentRemote: 0 | 1, flags: number, state: string, private readonly method: string) {
    super(out, traceId, parentSpanId, parentRemote, flags, state, method, SpanKind.SERVER, ['http.request.method', method], null);
  }

  // The port's end(route, status); a span's own end() is reached through super.
  override end(route?: string | null, status?: number): void {
    if (status === undefined) return super.end();
    // OpenTelemetry's HTTP conventions: named by method and route pattern (the method alone
    // without a route: the path is not bounded).
    if (route) {
      this.name = `${this.method} ${route}`;
      this.attribute('http.route', route);
    }
    this.attribute('http.response.status_code', status);
    if (status >= 500) this.error();
    super.end();
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
