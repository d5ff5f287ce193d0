import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { feedTableProjector } from '../dispatcher/feed-table.js';
import type { StreamReader } from '../dispatcher/history.js';
import { projectors as productProjectors } from '../projections/index.js';
import type { Projector } from '../projections/engine/projector.js';

/**
 * The projectors a thread applies: the product's read models and the change feed's table
 * (dispatcher/feed-table.ts, written through the thread's own connection `db` and reading payloads
 * from its log reader), or those a test module exports as `projectors` (a failing one, a counting
 * one); the same in every thread that projects, so the writer thread's inline step and the
 * projector thread keep every table at one checkpoint.
 */
export async function loadProjectors(projectorsModule: string | undefined, thread: { db: Database.Database; log: StreamReader }): Promise<Projector[]> {
  if (!projectorsModule) return [...productProjectors, feedTableProjector(thread.db, thread.log)];
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

/**
 * A worker thread on the module `entry` (a name without extension) beside `moduleUrl`: the build's
 * JavaScript, or, from the TypeScript sources (the test runner, which transforms no worker), the
 * `.ts` file through tsx's loader, registered inside the thread before the entry is imported.
 */
export function startModuleThread(moduleUrl: string, entry: string, options: { workerData: unknown; name: string }): Worker {
  const tsxApi = typeScriptLoaderFor(moduleUrl);
  if (!tsxApi) return new Worker(new URL(`./${entry}.js`, moduleUrl), options);
  const source = new URL(`./${entry}.ts`, moduleUrl).href;
  const boot = `import(${JSON.stringify(tsxApi)}).then((m) => { m.register(); return import(${JSON.stringify(source)}); })`;
  return new Worker(boot, { ...options, eval: true });
}
