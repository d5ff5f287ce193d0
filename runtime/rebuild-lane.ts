/*
 * The second thread of an offline rebuild (rebuild.ts): it builds the `independent` projectors it
 * is named into a file of its own, from the chunks of the log the first thread hands it
 * (rebuild-relay.ts), and says how far it has applied them. Its own reader of the log serves the
 * streams the change feed's payloads read as of each change.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openLogReader } from '../eventlog/sqlite-file.js';
import { SqliteReadCore } from '../projections/store/sqlite-core.js';
import { buildLane, type FromLane, type LaneSettings } from './rebuild.js';
import { chunkReceiver, RelayReader } from './rebuild-relay.js';
import { Timeline, threadCpuMs } from './rebuild-timeline.js';
import { loadProjectors } from './thread-projectors.js';

if (!parentPort) throw new Error('rebuild-lane runs as a worker thread (rebuild.ts)');
const port = parentPort;
const settings = workerData as LaneSettings;
const post = (m: FromLane) => port.postMessage(m);
const started = performance.now();
const timeline = new Timeline();
timeline.begin('start');
const next = chunkReceiver(settings.chunks, settings.bell);
const handed = new RelayReader(() => timeline.waitFor('a chunk', next));

const log = openLogReader(settings.logFile);
const core = new SqliteReadCore(settings.file, { fresh: true });
try {
  const projectors = (await loadProjectors(settings.projectorsModule, { db: core.db, log, bulk: true })).filter((p) => settings.names.includes(p.name));
  const missing = settings.names.filter((n) => !projectors.some((p) => p.name === n));
  if (missing.length) throw new Error(`no projector named ${missing.join(', ')}`);
  timeline.begin('log');
  // Bulk mode left on: the first thread copies these rows in and builds their indexes there.
  const { events, position } = await buildLane(core, projectors, handed, (read) => post({ type: 'read', events: read }), { keepBulk: true, timeline });
  // Timed here: the main thread may take this message only once its own share is done.
  post({ type: 'done', events, position: String(position), cpuMs: threadCpuMs(), ms: performance.now() - started, timeline: timeline.done() });
} catch (err) {
  post({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
} finally {
  settings.chunks.close();
  core.close();
  log.close();
}
