/*
 * The read-model projector thread of the embedded default, started by ProjectorThread
 * (read-models.ts): it owns the writing connection to the read database, follows the log file
 * on a reading connection of its own, and applies every projector chunk by chunk
 * (projections/sqlite-projection.ts), telling the main thread each position it reaches.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openLogReader } from '../eventlog/sqlite-file.js';
import { ProgressMeter } from '../projections/progress.js';
import { ProjectionFailure, SqliteProjection } from '../projections/sqlite-projection.js';
import { SqliteReadCore } from '../projections/store/sqlite-core.js';
import type { FromThread, ThreadSettings, ToThread } from './projector-wire.js';
import { loadProjectors } from './thread-projectors.js';

if (!parentPort) throw new Error('projector-thread runs as a worker thread (read-models.ts)');
const port = parentPort;
const settings = workerData as ThreadSettings;
const post = (m: FromThread) => port.postMessage(m);

const log = openLogReader(settings.logFile);
const core = new SqliteReadCore(settings.readFile);
const projection = new SqliteProjection(core, await loadProjectors(settings.projectorsModule, { db: core.db, log }), log);
const rebuilt = projection.prepare();
let position = projection.position();
post({ type: 'ready', position: String(position), head: String(log.head()), rebuilt });

let stopping = false;
let poked = false;
let wake: (() => void) | null = null;
/** While a failing event waits out its backoff, writes do not cut the wait short (only a stop does). */
let backingOff = false;
port.on('message', (m: ToThread) => {
  if (m.type === 'stop') stopping = true;
  poked = true;
  if (m.type === 'stop' || !backingOff) wake?.();
});

/** Waits `ms`, or less: until a message comes (a write to settle, a stop). */
const pause = (ms: number) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      wake = null;
      resolve();
    }
    wake = done;
  });

/**
 * `work` from this thread's loop at most once every `ms`. Busy (the lock held past the busy
 * timeout) or failing, it is tried again at a later turn.
 */
function every(ms: number, work: () => void): () => void {
  let last = 0;
  return () => {
    const now = Date.now();
    if (now - last < ms) return;
    last = now;
    try {
      work();
    } catch {
      // A later turn tries again.
    }
  };
}

/**
 * The search tables catch up here, off the write path (a write's own commit only notes the rows
 * it changed: SqliteReadCore.syncSearch), every 100 ms whether or not writes go on, so each batch
 * stays small and quick. Searches are exact meanwhile.
 */
const syncSearchWhenDue = every(100, () => void core.syncSearch());

/**
 * The WAL checkpoint of the read database, every 250 ms, passive (it waits for no one, and copies
 * what no reader still needs). The log's writer thread commits the inline projection's
 * transactions without checkpointing after them (inline-projection.ts), so the WAL would grow
 * without bound but for this; this thread's own commits still checkpoint as SQLite does by default.
 */
const checkpointWhenDue = every(250, () => void core.checkpointWal());

async function run(): Promise<void> {
  let delay = settings.retryInitialMs;
  let limit: number | undefined;
  let failing = false;
  let progress: ProgressMeter | null = null;
  while (!stopping) {
    poked = false;
    syncSearchWhenDue();
    checkpointWhenDue();
    const head = log.head();
    if (head > position || limit !== undefined || failing) {
      progress ??= head - position > 1_000 ? new ProgressMeter(Number(head - position), settings.progressEveryMs) : null;
      try {
        const step = await projection.step(limit);
        limit = undefined;
        delay = settings.retryInitialMs;
        if (failing) post({ type: 'recovered' });
        failing = false;
        position = step.position;
        const told = progress?.add(step.read, Number(head > position ? head - position : 0n));
        if (told) post({ type: 'progress', ...told });
        post({ type: 'position', position: String(position), caughtUp: step.caughtUp });
        if (step.caughtUp) progress = null;
        continue;
      } catch (err) {
        // The events before a failing one apply on their own; the failing one is retried, never passed.
        if (err instanceof ProjectionFailure && err.index > 0) {
          limit = err.index;
          continue;
        }
        failing = true;
        post({ type: 'failed', message: err instanceof Error ? err.message : String(err), retryInMs: delay });
        backingOff = true;
        await pause(delay);
        backingOff = false;
        delay = Math.min(delay * 2, settings.retryMaxMs);
        continue;
      }
    }
    // Caught up: this process's writes wake the thread at once (settle's message); another
    // process's at the next poll. Waking on the log's commit marks instead (Atomics.waitAsync on
    // OWN_LAST) was measured no faster: 32 connections, p50 16-23 ms, p99 35-57 ms either way.
    if (!poked) await pause(settings.pollMs);
  }
}

await run();
log.close();
core.close();
post({ type: 'stopped' });
port.close();
