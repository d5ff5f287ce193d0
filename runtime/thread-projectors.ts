import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectors as productProjectors } from '../projections/index.js';
import type { Projector } from '../projections/runner.js';

/**
 * The projectors a thread applies: the product's, or those a test module exports as `projectors`
 * (a failing one, a counting one), the same in every thread that projects.
 */
export async function loadProjectors(projectorsModule?: string): Promise<Projector[]> {
  if (!projectorsModule) return productProjectors;
  const mod = (await import(projectorsModule)) as { projectors: Projector[] };
  return mod.projectors;
}

/**
 * The TypeScript loader a thread must register before it imports `moduleUrl`, when that is a
 * source file (the test runner, which transforms no worker): tsx's, registered inside the thread
 * because Node 20 ignores `--import` hooks for a worker's own entry. Undefined for the build.
 */
export function typeScriptLoaderFor(moduleUrl: string): string | undefined {
  if (!moduleUrl.endsWith('.ts')) return undefined;
  return pathToFileURL(path.join(path.dirname(createRequire(moduleUrl).resolve('tsx/esm/api')), 'index.mjs')).href;
}
