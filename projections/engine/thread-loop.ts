import { type MessagePort, receiveMessageOnPort } from 'node:worker_threads';
import { Backoff } from '../../eventlog/backoff.js';
import { Pause } from '../../eventlog/pause.js';
import type { SqliteReadCore } from '../store/sqlite-core.js';
import { ProgressMeter } from './progress.js';
import type { SqliteProjection } from './sqlite-step.js';
import { ProjectionFailure } from './step.js';
import type { FromThread, ThreadSettings, ToThread } from './wire.js';

/**
 * WAL checkpoints of the read database run elsewhere (a thread of their own: the write path never
 * waits for their copy and sync): `committed` after each step, and each step waits for `idle`
 * while a RESTART runs.
 */
export interface WalKeeper {
  committed(): void;
  idle(): Promise<void>;
}

/** The thread's side of its messages (node:worker_threads' parentPort, in the product). */
export interface ThreadPort {
  post(message: FromThread): void;
  onMessage(listener: (message: ToThread) => void): void;
}

/**
 * The engine's driver on a thread of its own (the embedded data dir's read models): lays the read
 * database out, then steps the projection chunk by chunk until told to stop, telling the main
 * thread (thread.ts) each position it reaches, its catch-up progress and its failures. The
 * caller opens the log reader and the read database and closes them after.
 */
export async function driveProjectorThread(
  projection: SqliteProjection,
  core: SqliteReadCore,
  log: { head(): bigint },
  settings: ThreadSettings,
  port: ThreadPort,
  wal?: WalKeeper,
  /**
   * Given every message of the log's writer thread (each commit's notice: EventLog.tellCommits),
   * before the step that applies it; answers the commit's last position, if the notice holds one.
   */
  onCommit?: (notice: unknown) => bigint | undefined,
): Promise<void> {
  const rebuilt = projection.prepare();
  let position = await projection.position();
  port.post({ type: 'ready', position: String(position), head: String(log.head()), rebuilt });

  let stopping = false;
  let poked = false;
  /** Waits out a poll or a backoff, or less: until a message comes (a write to settle, a stop). */
  const pause = new Pause();
  /** While a failing event waits out its backoff, writes do not cut the wait short (only a stop does). */
  let backingOff = false;
  const poke = () => {
    poked = true;
    if (!backingOff) pause.wake();
  };
  /** Where the log's writer thread tells each of its commits: each one is applied at once. */
  const heard: { commits: MessagePort | null } = { commits: null };
  /** The last position the writer thread has told: past the position, it is work to do without asking the file. */
  let toldLast = 0n;
  const heardCommit = (notice: unknown) => {
    const last = onCommit?.(notice);
    if (last !== undefined && last > toldLast) toldLast = last;
  };
  port.onMessage((m) => {
    if (m.type === 'commits') {
      heard.commits?.close();
      heard.commits = m.port;
      m.port.on('message', (notice: unknown) => {
        heardCommit(notice);
        poke();
      });
      // Open while the loop runs; it must not keep the thread alive once the loop is over.
      m.port.unref();
      return;
    }
    if (m.type === 'stop') {
      stopping = true;
      pause.wake();
    }
    poke();
  });

  /**
   * The search tables catch up in batches (a step only notes the rows it changed:
   * SqliteReadCore.syncSearch): in the step's own transaction about once a second while writes go
   * on (or sooner, once 1,000 rows wait: sqlite-step.ts), and on their own once the writes have
   * paused for a poll; and once a second while quiet, for the rows another process or an earlier
   * run left waiting. FTS5 costs several times less a row in batches of a second's writes than of
   * a tenth's, and searches are exact meanwhile (they test the waiting rows on their text).
   */
  const search = { syncedAt: 0, steppedAt: 0, waiting: true };
  const syncSearchWhenQuiet = () => {
    const now = Date.now();
    if (now - search.steppedAt < SEARCH_QUIET_MS || (!search.waiting && now - search.syncedAt < SEARCH_EVERY_MS)) return;
    try {
      core.syncSearch();
      search.waiting = false;
      search.syncedAt = Date.now();
    } catch {
      // Busy (the lock held past the busy timeout): the next turn tries again.
    }
  };

  /**
   * Without a WalKeeper, the WAL checkpoint of the read database runs here, every 250 ms, passive
   * (it waits for no one, and copies what no reader still needs); this thread's own commits still
   * checkpoint as SQLite does by default, past 1,000 pages.
   */
  const checkpointWhenDue = wal ? () => wal.committed() : every(250, () => void core.checkpointWal());

  const backoff = new Backoff({ initialMs: settings.retryInitialMs, maxMs: settings.retryMaxMs });
  let limit: number | undefined;
  let failing = false;
  let progress: ProgressMeter | null = null;
  while (!stopping) {
    poked = false;
    syncSearchWhenQuiet();
    checkpointWhenDue();
    // A commit told and not yet applied is work enough to step: the step reads the head itself,
    // inside its transaction, and another process's rows after it keep the loop stepping.
    const head = toldLast > position ? toldLast : log.head();
    if (head > position || limit !== undefined || failing) {
      progress ??= head - position > 1_000 ? new ProgressMeter(Number(head - position), settings.progressEveryMs) : null;
      try {
        if (wal) await wal.idle();
        // The commits told since the last turn of the event loop: a thread behind steps again
        // without one, and its step takes them from the notices rather than the file.
        if (onCommit && heard.commits) for (let n = receiveMessageOnPort(heard.commits); n; n = receiveMessageOnPort(heard.commits)) heardCommit(n.message);
        const syncSearch = Date.now() - search.syncedAt >= SEARCH_EVERY_MS;
        const step = await projection.step(limit, { syncSearch });
        search.steppedAt = Date.now();
        if (step.searchSynced) search.syncedAt = search.steppedAt;
        search.waiting = !step.searchSynced && (search.waiting || step.read > 0);
        limit = undefined;
        backoff.reset();
        if (failing) port.post({ type: 'recovered' });
        failing = false;
        position = step.position;
        const told = progress?.add(step.read, Number(head > position ? head - position : 0n));
        if (told) port.post({ type: 'progress', ...told });
        port.post({ type: 'position', position: String(position), caughtUp: step.caughtUp });
        if (step.caughtUp) progress = null;
        continue;
      } catch (err) {
        // The events before a failing one apply on their own; the failing one is retried, never passed.
        if (err instanceof ProjectionFailure && err.index > 0) {
          limit = err.index;
          continue;
        }
        failing = true;
        const delay = backoff.next();
        port.post({ type: 'failed', message: err instanceof Error ? err.message : String(err), retryInMs: delay });
        backingOff = true;
        await pause.for(delay);
        backingOff = false;
        continue;
      }
    }
    // Caught up: this process's commits wake the thread at once (the writer thread's message, or
    // settle's where the log commits on the main thread); another process's at the next poll.
    if (!poked) await pause.for(settings.pollMs);
  }
  heard.commits?.close();
}

/** While writes go on, the search tables are synced in the step about this often. */
const SEARCH_EVERY_MS = 1_000;
/** Once no step has run for this long, the rows still waiting are synced. */
const SEARCH_QUIET_MS = 100;

/** `work` at most once every `ms`. Busy (the lock held past the busy timeout) or failing, it is tried again at a later turn. */
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
