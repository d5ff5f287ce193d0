/*
 * The entry of the read-model projector thread, started by startProjectorThread (read-models.ts):
 * it owns the writing connection to the read database, follows the log file on a reading
 * connection of its own, and runs the engine's thread driver (projections/engine/thread-loop.ts)
 * over the product's projectors. It lives here, not in the engine, because the projector set
 * includes the change feed's table (dispatcher/), which projections/ cannot import.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openLogReader } from '../eventlog/sqlite-file.js';
import { ApiKeyMark } from '../projections/api-key-mark.js';
import { SqliteProjection } from '../projections/engine/sqlite-step.js';
import { driveProjectorThread } from '../projections/engine/thread-loop.js';
import type { FromThread, ThreadSettings, ToThread } from '../projections/engine/wire.js';
import { SqliteReadCore } from '../projections/store/sqlite-core.js';
import { loadProjectors } from './thread-projectors.js';

if (!parentPort) throw new Error('projector-thread runs as a worker thread (read-models.ts)');
const port = parentPort;
const settings = workerData as ThreadSettings;

const log = openLogReader(settings.logFile);
const core = new SqliteReadCore(settings.readFile);
const keyMark = settings.keyMark && new ApiKeyMark(settings.keyMark);
const projection = new SqliteProjection(core, await loadProjectors(settings.projectorsModule, { db: core.db, log }), log, { keyMark });
await driveProjectorThread(projection, core, log, settings, {
  post: (m: FromThread) => port.postMessage(m),
  onMessage: (listener: (m: ToThread) => void) => port.on('message', listener),
});
log.close();
core.close();
port.postMessage({ type: 'stopped' } satisfies FromThread);
port.close();
