import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyServerFactory } from 'fastify';
import { closeChangeFeed } from './change-feed.js';
import { consoleRoutes, defaultConsoleDir } from './console.js';
import { frameworkErrors, installErrorHandling } from './errors.js';
import { loggerOptions } from './logging.js';
import { completeDocument, OPENAPI_FRAME } from './openapi.js';
import { adminRoutes } from './routes/admin/index.js';
import { publicRoutes } from './routes/index.js';
import { healthRoutes } from './routes/health.js';
import { readGate } from './read-gate.js';
import { countRequests, metricsRoute, tracedChildLogger, traceRequests } from './observability.js';
import { installJsonBodyParser } from './json-body.js';
import { Envelope } from './schemas/changes.js';
import { ErrorSchema } from './schemas/common.js';
import { hardenServer, refuseNoHost, serverOptions } from './transport.js';
import { refuseUnknownQuery } from './validation.js';
import { type LazySchemas, lazySchemas } from './lazy-schemas.js';
import type { Services } from '../runtime/services.js';

export const BODY_LIMIT = 64 * 1024;

export type App = FastifyInstance;

/** Each app's schemas, compiled at their first use (lazy-schemas.ts); serve.ts compiles the rest once the process is ready. */
const schemasOf = new WeakMap<object, LazySchemas>();
export const schemasOfApp = (app: App): LazySchemas | undefined => schemasOf.get(app);

export interface AppOptions {
  /** No logger (the default, for tests), or one at a level and to a stream, its credentials redacted (logging.ts). */
  logger?: false | Parameters<typeof loggerOptions>[0];
  startWaitMs?: number;
  /** The server the app is to serve (api/server.ts opens the port before the app is built). */
  serverFactory?: FastifyServerFactory;
  /** The built console (dist/console by default; tests build their own copy). */
  consoleDir?: string;
}

export async function buildApp(services: Services, options: AppOptions = {}): Promise<App> {
  const schemas = lazySchemas();
  const app = Fastify({
    logger: options.logger ? loggerOptions(options.logger) : false,
    bodyLimit: BODY_LIMIT,
    genReqId: () => `req_${Math.random().toString(36).slice(2, 12)}`,
    schemaController: { compilersFactory: schemas.compilersFactory as never },
    ...(options.serverFactory ? { serverFactory: options.serverFactory } : {}),
    ...serverOptions(services.config.connections),
    // Behind a proxy every client has the proxy's address; the proxies named here are believed
    // on X-Forwarded-For, so one client's failed keys throttle that client only (decisions.md §2).
    ...(services.config.trustProxy?.length ? { trustProxy: services.config.trustProxy } : {}),
    frameworkErrors,
    ...(services.tracing ? { childLoggerFactory: tracedChildLogger(services.tracing) } : {}),
  }).withTypeProvider<TypeBoxTypeProvider>();
  schemasOf.set(app, schemas);
  // A server made before the app (api/early-port.ts) was hardened when it was made.
  if (!options.serverFactory) hardenServer(app.server, services.config.connections);

  app.addSchema(ErrorSchema);
  app.addSchema(Envelope);
  installErrorHandling(app);
  app.addHook('onRequest', refuseNoHost);
  installJsonBodyParser(app);
  app.addHook('onRoute', refuseUnknownQuery);
  // Before any route is added, so every route answers with its request counted and its span ended.
  countRequests(app, services);
  traceRequests(app, services);
  await app.register(swagger, {
    openapi: OPENAPI_FRAME,
    transformObject: completeDocument as never,
    refResolver: { buildLocalReference: (json, _base, _frag, i) => String(json.$id ?? `def-${i}`) },
  });

  // The change feed's long-poll subscription ends with the app, before the runtime closes the log;
  // before the server stops taking requests, so pending polls answer at once instead of holding
  // the close for their whole wait.
  app.addHook('preClose', () => closeChangeFeed(services));
  await app.register(healthRoutes(services));
  await app.register(metricsRoute(services));
  // Everything that reads the read models waits, before anything reads (the API key first), for
  // them to catch up after a start and to settle to the log's head; the probes above do not.
  await app.register(async (gated) => {
    gated.addHook('onRequest', readGate(services, options.startWaitMs ?? services.config.startWaitMs));
    await gated.register(publicRoutes(services), { prefix: '/api/v1' });
    await gated.register(adminRoutes(services), { prefix: '/admin/v1' });
  });
  // The console's page reads no read model itself: it is outside the read gate, like the probes.
  await app.register(consoleRoutes(options.consoleDir ?? defaultConsoleDir()));
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}
