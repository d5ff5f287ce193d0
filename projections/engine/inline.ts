/*
 * The engine's inline driver: the step run on the event log's writer thread after each of its
 * commits (the log port's InlineStep, eventlog/port.ts), so a write answers with its events
 * already readable, without a round trip through the main thread to the projector thread and a
 * wait for that thread's step in progress. It applies only while the read models are close
 * behind the log; catch-up, rebuilds, other processes' appends and failing projectors stay the
 * projector thread's (thread-loop.ts). Both write under BEGIN IMMEDIATE and read the checkpoints
 * inside it (sqlite-step.ts), so neither applies an event the other did.
 */
import type { InlineStep } from '../../eventlog/port.js';
import { ApiKeyMark } from '../api-key-mark.js';
import type { SqliteReadCore } from '../store/sqlite-core.js';
import type { Projector } from './projector.js';
import { type LogReader, SqliteProjection } from './sqlite-step.js';

/** What the writer thread is given to open the inline step (runtime/inline-projection.ts). */
export interface InlineSettings {
  logFile: string;
  readFile: string;
  projectorsModule?: string;
  /** The process's API-key mark (api-key-mark.ts), where it keeps one. */
  keyMark?: SharedArrayBuffer;
}

/**
 * How long a commit waits for the projector thread's transaction before leaving its events to
 * that thread: its live steps take a few milliseconds; its catch-up chunks far longer.
 */
const LOCK_WAIT_MS = 50;

/**
 * The inline step over `core`, a connection of the writer thread's own to a read database the
 * projector thread has laid out. `close` closes what the caller opened for it.
 */
export function inlineStep(core: SqliteReadCore, projectors: Projector[], log: LogReader, close: () => void, keyMark?: SharedArrayBuffer): InlineStep {
  core.db.pragma(`busy_timeout = ${LOCK_WAIT_MS}`);
  // No WAL checkpoint after this connection's commits: at SQLite's default they ran on the
  // write path and took most of the commit time of a write's read models. The projector thread
  // checkpoints instead (thread-loop.ts), off the write path.
  core.db.pragma('wal_autocheckpoint = 0');
  for (const c of projectors.flatMap((p) => p.collections)) core.define(c);
  const projection = new SqliteProjection(core, projectors, log, { keyMark: keyMark && new ApiKeyMark(keyMark) });
  return { afterCommit: (last) => projection.applyNear(last), close };
}
