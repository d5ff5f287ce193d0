/*
 * The entry of the read-model projector thread, started by startProjectorThread (read-models.ts):
 * it owns the writing connection to the read database, follows the log file on a reading
 * connection of its own, and runs the engine's thread driver (projections/engine/thread-loop.ts)
 * over the product's projectors. It lives here, not in the engine, because the projector set
 * includes the change feed's table (dispatcher/), which projections/ cannot import.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openLogReader, toRecorded } from '../eventlog/sqlite-file.js';
import { RecentEvents } from '../eventlog/sqlite-recent.js';
import { type CommitNotice, eventsOfNotice } from '../eventlog/sqlite-wire.js';
import { ApiKeyMark } from '../projections/api-key-mark.js';
import { SqliteProjection } from '../projections/engine/sqlite-step.js';
import { driveProjectorThread } from '../projections/engine/thread-loop.js';
import type { FromThread, ThreadSettings, ToThread } from '../projections/engine/wire.js';
import { SqliteReadCore } from '../projections/store/sqlite-core.js';
import { READ_MODELS_WAL } from '../projections/store/sqlite-wal.js';
import { loadProjectors } from './thread-projectors.js';
import { WalCheckpointer } from './wal-checkpointer.js';

if (!parentPort) throw new Error('projector-thread runs as a worker thread (read-models.ts)');
const port = parentPort;
const settings = workerData as ThreadSettings;

const log = openLogReader(settings.logFile);
const core = new SqliteReadCore(settings.readFile);
const keyMark = settings.keyMark && new ApiKeyMark(settings.keyMark);
/**
 * This process's commits as the log's writer thread told them (EventLog.tellCommits): a step takes
 * the events after its position from here while they follow on without a gap, instead of reading
 * back the rows just written (another connection's commit invalidates this connection's page cache,
 * so that read went to the WAL file each time). Another process's rows are never here: the step
 * finds the gap and reads the file, as before.
 */
const told = new RecentEvents();
const isNotice = (m: unknown): m is CommitNotice => typeof m === 'object' && m !== null && Array.isArray((m as CommitNotice).texts);
const reader = {
  readAfter: (after: bigint, max: number) => {
    // Every read model has applied what is at or before `after`: those are not wanted again.
    told.forget(after);
    return told.after(after, max) ?? log.readAfter(after, max);
  },
  head: () => log.head(),
};
const projection = new SqliteProjection(core, await loadProjectors(settings.projectorsModule, { db: core.db, log }), reader, { keyMark });
// A projector thread slower than the writes it follows (tests of read-your-writes): each step
// starts this many milliseconds late.
const lateMs = Number(process.env.TURNOUT_TEST_PROJECTOR_LATE_MS ?? 0);
if (lateMs > 0) {
  const step = projection.step.bind(projection);
  projection.step = async (max, options) => {
    await new Promise((resolve) => setTimeout(resolve, lateMs));
    return step(max, options);
  };
}
// Every write waits for this thread's steps: the WAL's copy and sync run on a thread of their own.
const wal = new WalCheckpointer(core.db, { restartAt: READ_MODELS_WAL.restartAt, busyTimeoutMs: READ_MODELS_WAL.waitMs });
await driveProjectorThread(
  projection,
  core,
  log,
  settings,
  {
    post: (m: FromThread) => port.postMessage(m),
    onMessage: (listener: (m: ToThread) => void) => port.on('message', listener),
  },
  wal,
  (notice) => {
    if (!isNotice(notice)) return undefined;
    told.remember(eventsOfNotice(notice, toRecorded));
    return notice.last;
  },
);
await wal.close();
log.close();
core.close();
port.postMessage({ type: 'stopped' } satisfies FromThread);
port.close();
