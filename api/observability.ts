import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { FastifyChildLoggerFactory } from 'fastify/types/logger.js';
import type { Services } from '../runtime/services.js';
import type { RequestSpan, Tracing } from '../runtime/tracing-port.js';
import { adminTokenHook, failedAuthGuard } from './auth.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The request's server span, while tracing is on (decisions.md §15): a command of the request
     * is given it on its WriteContext (api/auth.ts), so its spans are the request's children.
     */
    span?: RequestSpan;
  }
}

/** The label of a request no route matched: a path from outside never becomes a label value. */
export const UNMATCHED = 'unmatched';

/**
 * The request families of decisions.md §15, counted when the answer has gone: the route is its
 * pattern (`/api/v1/constituents/:id`), never the URL, so ids stay out of the labels.
 */
export function countRequests(app: FastifyInstance, services: Services): void {
  const metrics = services.metrics;
  if (!metrics) return;
  // A callback hook: an async one would make a promise for every request.
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED;
    metrics.request(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    if (reply.statusCode === 429) metrics.limited();
    done();
  });
}

const SPAN = Symbol('turnout.requestSpan');
type Spanned = { [SPAN]?: RequestSpan };

/**
 * With tracing on, the request's span starts as Fastify makes its logger, before it logs the
 * request's arrival: both of its log lines then carry `trace_id` and `span_id`, so the arrival
 * joins its trace.
 */
export function tracedChildLogger(tracing: Tracing): FastifyChildLoggerFactory {
  return function (logger, bindings, options, raw) {
    const span = tracing.request(raw.method ?? 'GET', raw.headers);
    (raw as Spanned)[SPAN] = span;
    return logger.child({ ...bindings, trace_id: span.traceId, span_id: span.spanId }, options);
  };
}

/**
 * The request's server span (started by tracedChildLogger, continuing an incoming `traceparent`)
 * as `request.span`, so the command, the append and the wait for the read models are its
 * children; ended when the answer has gone. Installed only while tracing is on.
 */
export function traceRequests(app: FastifyInstance, services: Services): void {
  if (!services.tracing) return;
  // A getter, not an onRequest hook: the span is already on the raw request, and a hook would
  // add a step (and a promise) to every request for nothing.
  app.decorateRequest('span', {
    getter(this: FastifyRequest) {
      return (this.raw as Spanned)[SPAN];
    },
  });
  app.addHook('onResponse', (request, reply, done) => {
    request.span?.end(request.routeOptions.url ?? null, reply.statusCode);
    done();
  });
}

/** GET /metrics (decisions.md §15): the Prometheus text format, behind the admin token. */
export const metricsRoute =
  (services: Services): FastifyPluginAsync =>
  async (app) => {
    const metrics = services.metrics;
    if (!metrics) return;
    app.addHook('onRequest', adminTokenHook(services.config.adminToken!, failedAuthGuard(services.config.authFailuresPerMinute)));
    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => reply.type(metrics.contentType).send(await metrics.text()));
  };
