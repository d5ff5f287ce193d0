import type { Position } from '../domain/shared/events.js';
import type { CatchUpProgress } from '../projections/engine/progress.js';
import { ProjectorThread, type ProjectorThreadOptions } from '../projections/engine/thread.js';
import type { ThreadSettings } from '../projections/engine/wire.js';
import { startModuleThread } from './thread-projectors.js';

export type { CatchUpProgress };

/** The embedded read models' database, beside the log in the data dir. */
export const READ_MODELS_FILE = 'readmodels.sqlite';
export const LOG_FILE = 'turnout.sqlite';

/**
 * Starts the engine's thread driver on the data dir's files (projector-thread.ts, from the build or
 * the sources) with the product's projectors, or those of `settings.projectorsModule` (tests), and
 * resolves once it has laid out the read database; a thread that dies later is started again.
 * `attachLog` has the log tell it each commit.
 */
export function startProjectorThread(
  files: { logFile: string; readFile: string; keyMark?: SharedArrayBuffer },
  countAfter: (p: Position) => Promise<number>,
  options: ProjectorThreadOptions & { settings?: Partial<Omit<ThreadSettings, 'logFile' | 'readFile'>> } = {},
): Promise<ProjectorThread> {
  const settings: ThreadSettings = { pollMs: 100, progressEveryMs: 5_000, retryInitialMs: 100, retryMaxMs: 30_000, ...options.settings, ...files };
  const spawn = () => startModuleThread(import.meta.url, 'projector-thread', { workerData: settings, name: 'turnout-read-models' });
  // A thread that died is started again with the same waits as a failing event's retries.
  const restart = options.restart ?? { initialMs: settings.retryInitialMs, maxMs: settings.retryMaxMs };
  return ProjectorThread.start(spawn, countAfter, { ...options, restart });
}
