/*
 * The second thread of an offline rebuild (rebuild.ts): it builds the `independent` projectors it
 * is named into a file of its own and says how far it has applied them. It reads the log, once
 * for both threads, and hands each chunk to the first (rebuild-relay.ts), reading ahead of what
 * that one has applied by READ_AHEAD events at most. The same reader serves the streams the change
 * feed's payloads read as of each change.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openLogReader } from '../eventlog/sqlite-file.js';
import { SqliteReadCore } from '../projections/store/sqlite-core.js';
import { buildLane, type FromLane, type LaneSettings, READ_AHEAD, threadCpuMs, type ToLane } from './rebuild.js';
import { RelayedLog } from './rebuild-relay.js';
import { loadProjectors } from './thread-projectors.js';

if (!parentPort) throw new Error('rebuild-lane runs as a worker thread (rebuild.ts)');
const port = parentPort;
const settings = workerData as LaneSettings;
const post = (m: FromLane) => port.postMessage(m);
const started = performance.now();

/** The events the first thread has applied, and a wait for it to reach a number of them. */
let applied = 0;
let waiting: { events: number; resolve: () => void } | null = null;
port.on('message', (m: ToLane) => {
  applied = m.events;
  if (waiting && applied >= waiting.events) {
    waiting.resolve();
    waiting = null;
  }
});
const appliedThere = (events: number): Promise<void> => (applied >= events ? Promise.resolve() : new Promise((resolve) => (waiting = { events, resolve })));

const log = openLogReader(settings.logFile);
const relay = new RelayedLog(settings.logFile, post);
const core = new SqliteReadCore(settings.file, { fresh: true });
try {
  const projectors = (await loadProjectors(settings.projectorsModule, { db: core.db, log, bulk: true })).filter((p) => settings.names.includes(p.name));
  const missing = settings.names.filter((n) => !projectors.some((p) => p.name === n));
  if (missing.length) throw new Error(`no projector named ${missing.join(', ')}`);
  const { events, position } = await buildLane(core, projectors, relay, (read) => post({ type: 'read', events: read }), () => appliedThere(relay.relayed - READ_AHEAD));
  // Timed here: the main thread may take this message only once its own share is done.
  post({ type: 'done', events, position: String(position), cpuMs: threadCpuMs(), ms: performance.now() - started });
} catch (err) {
  post({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
} finally {
  port.removeAllListeners('message');
  core.close();
  relay.close();
  log.close();
}
