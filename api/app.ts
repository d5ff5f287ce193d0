import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Ajv from 'ajv';
import Fastify, { type FastifyInstance, type FastifyServerFactory } from 'fastify';
import { installErrorHandling } from './errors.js';
import { loggerOptions } from './logging.js';
import { completeDocument, OPENAPI_FRAME } from './openapi.js';
import { adminRoutes } from './routes/admin/index.js';
import { publicRoutes } from './routes/index.js';
import { healthRoutes } from './routes/health.js';
import { readGate } from './read-gate.js';
import { ErrorSchema } from './schemas/common.js';
import type { Services } from '../runtime/services.js';

export const BODY_LIMIT = 64 * 1024;


/**
 * Bodies are JSON and never coerced ("5" is not an integer), unknown fields are refused, not
 * stripped. Query strings and path parameters are text, so they are parsed into their types.
 * Fastify asks for a validator per plugin context, with the shared schemas known there.
 */
function buildValidator(externalSchemas: unknown) {
  const common = { allErrors: false, removeAdditional: false, useDefaults: true, allowUnionTypes: true, strict: false } as const;
  const body = new Ajv.default({ ...common, coerceTypes: false });
  const text = new Ajv.default({ ...common, coerceTypes: true });
  for (const schema of Object.values((externalSchemas ?? {}) as Record<string, object>)) {
    body.addSchema(schema);
    text.addSchema(schema);
  }
  return ({ schema, httpPart }: { schema: object; httpPart?: string }) => (httpPart === 'body' ? body.compile(schema) : strictIntegers(schema, text.compile(schema))) as never;
}

type Validate = ((data: unknown) => boolean) & { errors?: unknown };

/**
 * Ajv coerces any text Number() reads: `0x10` would read record 16, `1e3` record 1000, and an id
 * past 2^53 a neighbouring one. Integer parameters are decimal digits within the safe range.
 */
function strictIntegers(schema: object, validate: Validate): Validate {
  const props = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const names = Object.keys(props).filter((k) => props[k].type === 'integer');
  if (!names.length) return validate;
  const checked: Validate = (data) => {
    for (const name of names) {
      const v = (data as Record<string, unknown> | null)?.[name];
      if (typeof v !== 'string') continue;
      const bad = !/^-?\d+$/.test(v) ? 'must be a whole number' : Math.abs(Number(v)) > Number.MAX_SAFE_INTEGER ? `must be at most ${Number.MAX_SAFE_INTEGER}` : null;
      if (bad) {
        checked.errors = [{ keyword: 'strictInteger', instancePath: `/${name}`, params: {}, message: bad }];
        return false;
      }
    }
    const ok = validate(data);
    checked.errors = validate.errors;
    return ok;
  };
  return checked;
}

export type App = FastifyInstance;

export interface AppOptions {
  /** No logger (the default, for tests), or one at a level and to a stream, its credentials redacted (logging.ts). */
  logger?: false | Parameters<typeof loggerOptions>[0];
  startWaitMs?: number;
  /** The server the app is to serve (api/server.ts opens the port before the app is built). */
  serverFactory?: FastifyServerFactory;
}

export async function buildApp(services: Services, options: AppOptions = {}): Promise<App> {
  const app = Fastify({
    logger: options.logger ? loggerOptions(options.logger) : false,
    bodyLimit: BODY_LIMIT,
    genReqId: () => `req_${Math.random().toString(36).slice(2, 12)}`,
    schemaController: { compilersFactory: { buildValidator: buildValidator as never } },
    ...(options.serverFactory ? { serverFactory: options.serverFactory } : {}),
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.addSchema(ErrorSchema);
  installErrorHandling(app);
  await app.register(swagger, {
    openapi: OPENAPI_FRAME,
    transformObject: completeDocument as never,
    refResolver: { buildLocalReference: (json, _base, _frag, i) => String(json.$id ?? `def-${i}`) },
  });

  await app.register(healthRoutes(services));
  // Everything that reads the read models waits, before anything reads (the API key first), for
  // them to catch up after a start and to settle to the log's head; the probes above do not.
  await app.register(async (gated) => {
    gated.addHook('onRequest', readGate(services, options.startWaitMs ?? services.config.startWaitMs));
    await gated.register(publicRoutes(services), { prefix: '/api/v1' });
    await gated.register(adminRoutes(services), { prefix: '/admin/v1' });
  });
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}
