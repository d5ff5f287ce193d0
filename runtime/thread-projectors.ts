import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { FEED_TABLE_VERSION, feedTableProjector } from '../dispatcher/feed-table.js';
import type { StreamReader } from '../dispatcher/history.js';
import { productProjectors, projectors } from '../projections/index.js';
import type { Projector } from '../projections/engine/projector.js';

/**
 * The projectors a thread applies: the product's read models (the ticket sales reading a deleted
 * linked record's stream from the thread's log reader) and the change feed's table
 * (dispatcher/feed-table.ts, written through the thread's own connection `db` and reading payloads
 * from its log reader), or those a test module exports as `projectors` (a failing one, a counting
 * one); the same in every thread that projects, so the projector thread, the rebuild and its
 * lane keep every table at one checkpoint. `bulk`: for a build from nothing (an offline
 * rebuild), whose driver calls each projector's `endBulk` once the log is applied.
 */
export async function loadProjectors(projectorsModule: string | undefined, thread: { db: Database.Database; log: StreamReader; bulk?: boolean }): Promise<Projector[]> {
  if (!projectorsModule) return [...productProjectors(thread.log), feedTableProjector(thread.db, thread.log, { bulk: thread.bulk })];
  const mod = (await import(projectorsModule)) as { projectors: Projector[] };
  return mod.projectors;
}

/**
 * The name and version of every projector loadProjectors gives a thread, without opening a read
 * database: what a release's read models are, for its prepared files (runtime/prepared.ts).
 */
export async function projectorVersions(projectorsModule?: string): Promise<Array<{ name: string; version: number }>> {
  const all = projectorsModule ? ((await import(projectorsModule)) as { projectors: Projector[] }).projectors : [...projectors, FEED_TABLE_VERSION];
  return all.map((p) => ({ name: p.name, version: p.version }));
}

/**
 * The compiled twin of a source module in the test build (`npm test` compiles the whole tree into
 * TURNOUT_TEST_BUILD before vitest starts), if there is one. A thread started on it loads in a
 * fraction of the time the same thread takes through tsx's loader, and runs the same code.
 */
function compiledFor(moduleUrl: string): string | undefined {
  const build = process.env.TURNOUT_TEST_BUILD;
  if (!build || !moduleUrl.endsWith('.ts')) return undefined;
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const source = fileURLToPath(moduleUrl);
  const relative = path.relative(root, source);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return undefined;
  const compiled = path.join(path.resolve(root, build), relative.replace(/\.ts$/, '.js'));
  return existsSync(compiled) ? pathToFileURL(compiled).href : undefined;
}

/**
 * How a thread loads the module at `moduleUrl`: the build's JavaScript as it is; a source file
 * (the test runner, which transforms no worker) from the test build when there is one, else
 * through tsx's loader (`register`), registered inside the thread because Node 20 ignores
 * `--import` hooks for a worker's own entry.
 */
export function threadModule(moduleUrl: string): { url: string; register?: string } {
  if (!moduleUrl.endsWith('.ts')) return { url: moduleUrl };
  const compiled = compiledFor(moduleUrl);
  if (compiled) return { url: compiled };
  return { url: moduleUrl, register: pathToFileURL(path.join(path.dirname(createRequire(moduleUrl).resolve('tsx/esm/api')), 'index.mjs')).href };
}

/**
 * A thread's settings for a thread that threadModule loads from `url`: a test's projectors module
 * compiled too when the thread runs compiled modules, since it has no TypeScript loader.
 */
export function forThread<T>(url: string, settings: T): T {
  const given = (settings as { projectorsModule?: unknown } | null)?.projectorsModule;
  if (url.endsWith('.ts') || typeof given !== 'string') return settings;
  return { ...settings, projectorsModule: compiledFor(given) ?? given };
}

/**
 * A worker thread on the module `entry` (a name without extension) beside `moduleUrl`, loaded as
 * threadModule says.
 */
export function startModuleThread(moduleUrl: string, entry: string, options: { workerData: unknown; name: string; transferList?: WorkerOptions['transferList'] }): Worker {
  const extension = moduleUrl.endsWith('.ts') ? '.ts' : '.js';
  const { url, register } = threadModule(new URL(`./${entry}${extension}`, moduleUrl).href);
  const settings = { ...options, workerData: forThread(url, options.workerData) };
  if (!register) return new Worker(new URL(url), settings);
  const boot = `import(${JSON.stringify(register)}).then((m) => { m.register(); return import(${JSON.stringify(url)}); })`;
  return new Worker(boot, { ...settings, eval: true });
}

/**
 * The one answer of a short-lived thread that does one job and exits (an erasure's scans, the
 * search merge, a WAL emptied): its message, `{error}` when it failed, taken once it has exited
 * (its connections closed). `what` names the job in the errors.
 */
export function answerOnExit<A extends object>(worker: Worker, what: string): Promise<A> {
  return new Promise((resolve, reject) => {
    let answer: A | { error: string } | null = null;
    worker.once('message', (a: A | { error: string }) => (answer = a));
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (!answer) reject(new Error(`${what} stopped before it was done (exit code ${code})`));
      else if ('error' in answer) reject(new Error(`${what} failed: ${answer.error}`));
      else resolve(answer);
    });
  });
}
