import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from '@sinclair/typebox';

/**
 * decisions.md §13: the page and its assets come from this origin only, and nothing else may run.
 * No directive names another origin, `*` or a scheme; 'none' closes what default-src leaves open.
 */
export const CONSOLE_CSP = "default-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'";

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json; charset=utf-8',
};

/**
 * Where `npm run build` puts the console: dist/console under the package root. The root is found
 * by walking up from this module, which runs from the sources (vitest), from dist/ (npm start,
 * the image) or from a test build under node_modules/.cache.
 */
export function defaultConsoleDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return path.join(dir, 'dist', 'console');
}

/** The built files, read once: a fixed set of names, so no request path ever reaches the file system. */
function loadAssets(dir: string): Map<string, { body: Buffer; type: string }> {
  const assets = new Map<string, { body: Buffer; type: string }>();
  if (!existsSync(dir)) return assets;
  for (const name of readdirSync(dir)) {
    const type = TYPES[path.extname(name)];
    if (type) assets.set(name, { body: readFileSync(path.join(dir, name)), type });
  }
  return assets;
}

function send(reply: FastifyReply, asset: { body: Buffer; type: string }, cache: string): FastifyReply {
  return reply
    .header('content-type', asset.type)
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', cache)
    .send(asset.body);
}

/** GET /console and /console/<asset>: the operators' web console (console/, built by esbuild). */
export function consoleRoutes(dir: string) {
  return async (app: FastifyInstance) => {
    const assets = loadAssets(dir);
    const page = async (_request: unknown, reply: FastifyReply) => {
      const index = assets.get('index.html');
      if (!index) return reply.code(503).send({ error: { code: 'console_not_built', message: 'The console is not built; run `npm run build`.' } });
      // The page is small and names its assets; no-store keeps a new build from meeting an old page.
      return send(reply, index, 'no-store');
    };
    app.get('/console', { schema: { hide: true } }, page);
    app.get('/console/', { schema: { hide: true } }, page);
    app.get('/console/:asset', { schema: { hide: true, params: Type.Object({ asset: Type.String({ maxLength: 100 }) }) } }, async (request, reply) => {
      const asset = assets.get((request.params as { asset: string }).asset);
      if (!asset || (request.params as { asset: string }).asset === 'index.html') {
        return reply.code(404).send({ error: { code: 'not_found', message: 'No such console file.' } });
      }
      return send(reply, asset, 'no-cache');
    });
  };
}
