import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { buildValidator } from '../validation/validator.js';

/**
 * Fastify compiles every route's validators (Ajv) and response serializers (fast-json-stringify)
 * at `ready()`: about a thousand schemas, the largest part of a start's CPU before the routes
 * serve (decisions.md §13: /readyz 200 within 3 s of a start). Here each is compiled at its
 * first use instead, by the very compiler Fastify would have called with the same arguments, so
 * a route validates and writes exactly as before; `compileAll` compiles the rest once the
 * process is ready (api/serve.ts), so requests later pay nothing and a schema that cannot
 * compile is still reported at start.
 */
export interface LazySchemas {
  /** Fastify's `schemaController.compilersFactory`. */
  compilersFactory: { buildValidator: unknown; buildSerializer: unknown };
  /** Schemas given to the compilers and not compiled yet. */
  pending(): number;
  /**
   * Compiles every pending schema, one per turn of the event loop so that requests are served in
   * between; resolves with the number compiled, and the routes whose schema failed to compile.
   * `stopped` ends it early (a shutdown).
   */
  compileAll(stopped?: () => boolean): Promise<{ compiled: number; failed: string[] }>;
}

type Compiled = ((data: unknown, context?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };
interface Route {
  method?: string;
  url?: string;
  httpPart?: string;
  httpStatus?: string;
}

export function lazySchemas(): LazySchemas {
  const pending = new Set<{ force: () => void; route: Route }>();

  /** `compile` at the first call; the returned function behaves as what it returns. */
  function lazily<F extends Compiled>(route: Route, compile: () => F, validator: boolean): F {
    let compiled: F | null = null;
    const first = (): F => {
      if (!compiled) {
        pending.delete(entry);
        compiled = compile();
      }
      return compiled;
    };
    const entry = { force: () => void first(), route };
    pending.add(entry);
    if (!validator) return ((doc: unknown) => first()(doc)) as F;
    // Fastify passes the request as the root's parent only to a function with `schemaEnv` (an Ajv
    // one), so the wrapper says it has one and hands the context on as it was given: Ajv's
    // functions take it, the query's number check (validation/validator.ts) ignores it, as before.
    const validate = ((data: unknown, context?: unknown) => {
      const f = first();
      const ok = f(data, context);
      validate.errors = f.errors;
      return ok;
    }) as F;
    validate.schemaEnv = true;
    return validate;
  }

  const compilersFactory = {
    buildValidator: (externalSchemas: unknown) => {
      const compile = buildValidator(externalSchemas) as unknown as (route: Route & { schema: object }) => Compiled;
      return (route: Route & { schema: object }) => lazily(route, () => compile(route), true);
    },
    buildSerializer: (externalSchemas: unknown, options: unknown) => {
      const compile = SerializerSelector()(externalSchemas, options as never) as unknown as (route: Route & { schema: unknown }) => Compiled;
      return (route: Route & { schema: unknown }) => lazily(route, () => compile(route), false);
    },
  };

  return {
    compilersFactory,
    pending: () => pending.size,
    async compileAll(stopped = () => false) {
      let compiled = 0;
      const failed: string[] = [];
      for (const entry of pending) {
        if (stopped()) break;
        try {
          entry.force();
          compiled++;
        } catch (err) {
          const { method, url, httpPart, httpStatus } = entry.route;
          failed.push(`${method} ${url} ${httpPart ?? `response ${httpStatus}`}: ${err instanceof Error ? err.message : String(err)}`);
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
      return { compiled, failed };
    },
  };
}
