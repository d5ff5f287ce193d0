import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import { installErrorHandling } from './errors.js';
import { adminRoutes } from './routes/admin/index.js';
import { publicRoutes } from './routes/index.js';
import { healthRoutes } from './routes/health.js';
import { installJsonBodyParser } from './json-body.js';
import { ErrorSchema } from './schemas/common.js';
import { frameworkErrors, hardenServer, serverOptions } from './transport.js';
import { buildValidator, refuseUnknownQuery } from './validation.js';
import type { Services } from '../runtime/services.js';

export const BODY_LIMIT = 64 * 1024;

export type App = FastifyInstance;

export async function buildApp(services: Services, options: { logger?: boolean | object } = {}): Promise<App> {
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: BODY_LIMIT,
    genReqId: () => `req_${Math.random().toString(36).slice(2, 12)}`,
    schemaController: { compilersFactory: { buildValidator: buildValidator as never } },
    ...serverOptions(services.config.connections),
    frameworkErrors,
  }).withTypeProvider<TypeBoxTypeProvider>();
  hardenServer(app.server, services.config.connections);

  app.addSchema(ErrorSchema);
  installErrorHandling(app);
  installJsonBodyParser(app);
  app.addHook('onRoute', refuseUnknownQuery);
  // Before anything reads (the API key first): a write answered by another process is visible.
  const settleReads = services.settleReads;
  if (settleReads)
    app.addHook('onRequest', (_request, _reply, done) => {
      const settling = settleReads();
      if (settling) settling.then(() => done(), done);
      else done();
    });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Turnout integration API', version: '1.0.0', description: 'Constituents, volunteers, volunteer tasks, events and ticket sales. Authenticate with "Authorization: Bearer <API key>".' },
      servers: [{ url: '/' }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    refResolver: { buildLocalReference: (json, _base, _frag, i) => String(json.$id ?? `def-${i}`) },
  });

  await app.register(healthRoutes(services));
  await app.register(publicRoutes(services), { prefix: '/api/v1' });
  await app.register(adminRoutes(services), { prefix: '/admin/v1' });
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}
