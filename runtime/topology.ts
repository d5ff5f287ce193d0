import type { Config } from './config.js';

/**
 * Where this process's read models are kept and who writes them: one of four arrangements of
 * the projection engine (projections/engine/), picked from the configuration once, at start.
 *
 * - `file-thread`: the embedded data dir. The read models are `readmodels.sqlite` beside the log,
 *   written by the engine's thread driver, which the log's writer thread tells each commit; a
 *   write waits for the thread's position (read-your-writes).
 * - `in-process`: read models in this process's memory, rebuilt at every start (an in-memory data
 *   dir, or EventStoreDB without MongoDB), kept by the main-thread driver; a write waits for it.
 * - `leased`: a shared MongoDB read store, kept by the main-thread driver of whichever projector
 *   process holds the lease; a write waits for the store's checkpoint.
 * - `reader`: a shared MongoDB read store that another process keeps (roles `api`, `dispatcher`);
 *   a write waits for the store's checkpoint.
 */
export type ReadModelTopology = 'file-thread' | 'in-process' | 'leased' | 'reader';

export function readModelTopology(config: Config): ReadModelTopology {
  if (config.mongoUrl) return config.role === 'all' || config.role === 'projector' ? 'leased' : 'reader';
  if (!config.eventStoreUrl && config.dataDir !== ':memory:') return 'file-thread';
  return 'in-process';
}
