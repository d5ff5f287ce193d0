/*
 * The read models' inline projection: run on the event log's writer thread after each of its
 * commits (eventlog/sqlite-writer-thread.js loads this module by its URL), so a write answers with
 * its events already readable, without a round trip through the main thread to the projector
 * thread and a wait for that thread's step in progress. It applies only while the read models are
 * close behind the log; catch-up, rebuilds, other processes' appends and failing projectors stay
 * the projector thread's (projector-thread.ts). Both write under BEGIN IMMEDIATE and read the
 * checkpoints inside it (sqlite-projection.ts), so neither applies an event the other did.
 */
import type { AfterCommit, AfterCommitModule } from '../eventlog/sqlite-wire.js';
import { openLogReader } from '../eventlog/sqlite-file.js';
import { SqliteProjection } from '../projections/sqlite-projection.js';
import { SqliteReadCore } from '../projections/store/sqlite-core.js';
import { forThread, loadProjectors, threadModule } from './thread-projectors.js';

export interface InlineSettings {
  logFile: string;
  readFile: string;
  projectorsModule?: string;
}

/**
 * How long a commit waits for the projector thread's transaction before leaving its events to
 * that thread: its live steps take a few milliseconds; its catch-up chunks far longer.
 */
const LOCK_WAIT_MS = 50;

/** This module as the writer thread's after-commit work. */
export function inlineProjection(settings: InlineSettings): AfterCommitModule {
  const { url, register } = threadModule(import.meta.url);
  return { module: url, register, options: forThread(url, settings) };
}

/** Called on the writer thread once the projector thread has laid the read database out. */
export async function open(settings: InlineSettings): Promise<AfterCommit> {
  const log = openLogReader(settings.logFile);
  const core = new SqliteReadCore(settings.readFile, { laidOutElsewhere: true });
  core.db.pragma(`busy_timeout = ${LOCK_WAIT_MS}`);
  // No WAL checkpoint after this connection's commits: at SQLite's default of one every 1,000
  // pages it ran about one commit in five here and took most of the commit time of a write's
  // read models (2.5 of 3.2 ms a commit in an import). The projector thread checkpoints instead
  // (projector-thread.ts), off the write path.
  core.db.pragma('wal_autocheckpoint = 0');
  const projectors = await loadProjectors(settings.projectorsModule, { db: core.db, log });
  for (const p of projectors) for (const c of p.collections) core.define(c);
  const projection = new SqliteProjection(core, projectors, log);
  return {
    afterCommit: (last) => projection.applyNear(last),
    close: () => {
      core.close();
      log.close();
    },
  };
}
