import type { TraceHooks } from '../commands/context.js';

/**
 * One request's server span (api/observability.ts starts it as Fastify makes the request's logger
 * and ends it in onResponse). Its hooks start the request's child spans (command, wait for the
 * read models), carried explicitly on the WriteContext: there is no ambient context.
 */
export interface RequestSpan extends TraceHooks {
  readonly traceId: string;
  readonly spanId: string;
  /** `route` is the route pattern; null when no route matched (the span is then named by the method alone). */
  end(route: string | null, status: number): void;
}

/** What a webhook attempt's span records of the attempt. */
export interface AttemptResult {
  ok: boolean;
  responseStatus: number | null;
  error: string | null;
}

/**
 * Tracing as the layers see it (decisions.md §15), implemented by runtime/tracing.ts over the
 * OpenTelemetry SDK, which is loaded only when OTEL_EXPORTER_OTLP_ENDPOINT is set: with it unset
 * the runtime holds no Tracing and the hooks that take one are never installed.
 */
export interface Tracing {
  /** A server span for an incoming request, continuing its W3C `traceparent` when it has one. */
  request(method: string, headers: Record<string, string | string[] | undefined>): RequestSpan;
  /**
   * A span for one webhook attempt, linked to the span of the write that caused it (`cause`, the
   * traceparent kept in the event's metadata); `fn` is given the attempt's own traceparent to send.
   */
  attempt<R extends AttemptResult>(cause: string | undefined, attributes: Record<string, string | number>, fn: (traceparent: string) => Promise<R>): Promise<R>;
  /** Sends the spans buffered so far (the cost bench counts their export). */
  flush(): Promise<void>;
  /** Sends what is still buffered, then stops. */
  close(): Promise<void>;
}
