import { existsSync, renameSync, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openLogReader } from '../eventlog/sqlite-file.js';
import { type CatchUpProgress, ProgressMeter } from '../projections/engine/progress.js';
import { type LogReader, SqliteProjection } from '../projections/engine/sqlite-step.js';
import { SqliteReadCore } from '../projections/store/sqlite-core.js';
import { lockPrepare } from './datadir-lock.js';
import { ErasureUnderway, erasuresUnderway } from './erasure-journal.js';
import { fingerprintOf, preparedFile, preparedFiles, readPreparedState, staleReadModels, writePreparedState } from './prepared.js';
import { privateFile } from './private-files.js';
import { LOG_FILE, READ_MODELS_FILE } from './read-models.js';
import { removeDatabase, syncPath } from './rebuild-files.js';
import { loadProjectors, projectorVersions, startModuleThread } from './thread-projectors.js';

export interface PrepareOptions {
  /** Told every `progressEveryMs` while the read models are built from the log, and once at the end. */
  onProgress?: (progress: CatchUpProgress) => void;
  progressEveryMs?: number;
  /** Told every quarter second while the live read models are copied: bytes written, and the live file's size. */
  onCopy?: (bytes: number, total: number) => void;
  /** What it did beside the progress: files removed, a prepare resumed. */
  report?: (line: string) => void;
  /** A module exporting the projectors (tests); the product's by default. */
  projectorsModule?: string;
  /**
   * Called before a step that tells no progress while it runs (the last one, which builds the
   * search and list indexes of what was built in bulk) with what it does; the answer is called
   * after it. The CLI keeps printing meanwhile from a thread of its own.
   */
  whileSilent?: (what: string) => () => void;
}

export interface Prepared {
  /** The prepared file, or null when the live read models already hold every version of this release. */
  file: string | null;
  /** The read models built from the log (their version is not the live one's). */
  built: string[];
  /** Whether it went on with what an earlier prepare of this release had built. */
  resumed: boolean;
  /** Events applied, and the log position reached. */
  events: number;
  position: bigint;
  ms: number;
}

/**
 * `turnout rebuild --prepare` (decisions.md §13): run with a new release while the old release's
 * server holds the data dir and serves. Builds, beside the live read models, a read database at
 * this release's versions (prepared.ts names it): a copy of the live one in which only the read
 * models whose version changed are built again from the log, then all of it follows the log until
 * caught up. The release's start adopts it and applies only what came after.
 *
 * It never writes the log or the live read models (read-only connections: SQLite's WAL lets it
 * read both while the server writes) and never takes the data dir's lock; a lock of its own keeps
 * to one prepare at a time. Killed, it leaves its file consistent (every step is a transaction with
 * its checkpoints) and the next prepare of the same release goes on from there.
 */
export async function prepareReadModels(dataDir: string, options: PrepareOptions = {}): Promise<Prepared> {
  const started = performance.now();
  const report = options.report ?? (() => undefined);
  const lock = lockPrepare(dataDir);
  let log: ReturnType<typeof openLogReader> | null = null;
  let core: SqliteReadCore | null = null;
  let target: string | null = null;
  // An erasure removes every prepared file (decisions.md §17); one that begins meanwhile waits for
  // this prepare to let go of its lock, which it does at its next look at the journal.
  let looked = 0;
  const stopForErasure = (every = 250) => {
    if (performance.now() - looked < every) return;
    looked = performance.now();
    const ids = erasuresUnderway(dataDir);
    if (ids.length) throw new ErasureUnderway(ids);
  };
  try {
    stopForErasure(0);
    const versions = await projectorVersions(options.projectorsModule);
    const fingerprint = fingerprintOf(versions);
    target = preparedFile(dataDir, fingerprint);
    for (const f of preparedFiles(dataDir)) {
      if (f.fingerprint === fingerprint && !f.partial) continue;
      removeDatabase(f.file);
      if (!f.partial) report(`removed ${f.name}: prepared by a release whose read-model versions differ from this one`);
    }
    const stale = staleReadModels(dataDir, versions).map((v) => v.name);
    if (!stale.length) {
      if (existsSync(target)) removeDatabase(target);
      report('nothing to prepare: the live read models hold every version of this release');
      return { file: null, built: [], resumed: false, events: 0, position: 0n, ms: performance.now() - started };
    }
    const resumed = resumable(target, fingerprint);
    if (resumed) report(`resuming ${path.basename(target)}`);
    else {
      removeDatabase(target);
      const live = path.join(dataDir, READ_MODELS_FILE);
      // The read models whose version stays are copied as they are; only the others are built from the log.
      if (stale.length < versions.length && existsSync(live)) await copyLive(live, target, options.onCopy, stopForErasure);
    }
    privateFile(target, { sqlite: true });
    log = openLogReader(path.join(dataDir, LOG_FILE), { readonly: true });
    const opened = (core = new SqliteReadCore(target));
    const projectors = await loadProjectors(options.projectorsModule, { db: opened.db, log });
    const projection = new SqliteProjection(opened, projectors, log);
    projection.prepare();
    if (!resumed) opened.transaction(() => writePreparedState(opened.db, { fingerprint, built: stale, done: false, position: 0n, stream: null, revision: null }));
    const collections = projectors.filter((p) => stale.includes(p.name)).flatMap((p) => p.collections.map((c) => c.name));
    const indexesWait = () => collections.some((name) => opened.inBulk(name));
    const { events, position } = await follow(projection, log, { ...options, report }, indexesWait, stopForErasure);
    // The last step may have built indexes for minutes without a look: one more before it is done.
    stopForErasure(0);
    const last = position > 0n ? log.readAfter(position - 1n, 1)[0] : undefined;
    const state = readPreparedState(opened.db)!;
    opened.transaction(() => writePreparedState(opened.db, { ...state, done: true, position, stream: last?.stream ?? null, revision: last?.revision ?? null }));
    // Closing checkpoints the WAL into the file and syncs it (synchronous=NORMAL), so the start renames one whole file.
    opened.close();
    core = null;
    return { file: target, built: state.built, resumed, events, position, ms: performance.now() - started };
  } catch (err) {
    if (err instanceof ErasureUnderway && target) {
      core?.close();
      core = null;
      removeDatabase(target);
      removeDatabase(`${target}.copy`);
    }
    throw err;
  } finally {
    core?.close();
    log?.close();
    lock.release();
  }
}

/** A bulk step's events (engine/step.ts): a read model in bulk mode this close to the head builds its indexes in the next step. */
const LAST_BULK_STEP = 20_000;

/**
 * Steps the projection until it has caught up with the log, which the server may still be writing.
 * The step that catches up builds the search and list indexes of what was built in bulk mode, in
 * one transaction that tells no progress (a minute or two at a million rows): that is said first.
 */
async function follow(projection: SqliteProjection, log: LogReader, options: PrepareOptions, indexesWait: () => boolean, stopForErasure: () => void): Promise<{ events: number; position: bigint }> {
  const from = await projection.position();
  const meter = new ProgressMeter(Number(log.head() - from), options.progressEveryMs ?? 5_000);
  // Told at once, so a rate counts from here (the first step may take seconds).
  options.onProgress?.(meter.now(Number(log.head() - from)));
  let events = 0;
  let said = false;
  for (;;) {
    stopForErasure();
    let silent: (() => void) | null = null;
    if (!said && Number(log.head() - (await projection.position())) <= LAST_BULK_STEP && indexesWait()) {
      said = true;
      const what = 'the last events, then the search and list indexes of the read models built from the log';
      options.report?.(`${what}, in one step`);
      silent = options.whileSilent?.(what) ?? null;
    }
    let step;
    try {
      step = await projection.step();
    } finally {
      silent?.();
    }
    events += step.read;
    const behind = Number(log.head() - step.position);
    const progress = meter.add(step.read, Math.max(0, behind));
    if (progress && !step.caughtUp) options.onProgress?.(progress);
    if (step.caughtUp) {
      // Caught up, all there was is done: the total counted positions, which gaps in the log can outnumber.
      const last = meter.now(0);
      options.onProgress?.({ ...last, total: last.done });
      return { events, position: step.position };
    }
    // A step's awaits are microtasks only: this lets timers and signals in between.
    await new Promise(setImmediate);
  }
}

/** A prepared file this release began (its state says so) that opens: the next prepare goes on with it. */
function resumable(file: string, fingerprint: string): boolean {
  if (!existsSync(file)) return false;
  try {
    const db = new Database(file, { fileMustExist: true });
    try {
      return readPreparedState(db)?.fingerprint === fingerprint;
    } finally {
      db.close();
    }
  } catch {
    return false;
  }
}

/**
 * Copies the live read models to `target` on a thread of its own (prepare-copy.ts), telling how
 * far the copy has come. It is written under another name and renamed once whole and synced, so a
 * prepare killed meanwhile leaves no file that looks prepared.
 */
async function copyLive(live: string, target: string, onCopy: ((bytes: number, total: number) => void) | undefined, stopForErasure: () => void): Promise<void> {
  const partial = `${target}.copy`;
  removeDatabase(partial);
  // VACUUM INTO writes into an empty file: made here, so it is private from the start.
  privateFile(partial);
  const total = statSync(live).size;
  const size = () => (existsSync(partial) ? statSync(partial).size : 0);
  const worker = startModuleThread(import.meta.url, 'prepare-copy', { workerData: { from: live, to: partial }, name: 'turnout-prepare-copy' });
  let stop: (err: unknown) => void = () => undefined;
  const timer = setInterval(() => {
    onCopy?.(Math.min(size(), total), total);
    try {
      stopForErasure();
    } catch (err) {
      stop(err);
    }
  }, 250);
  try {
    await new Promise<void>((resolve, reject) => {
      stop = reject;
      worker.once('message', (m: { ok: boolean; message?: string }) => (m.ok ? resolve() : reject(new Error(`copying the live read models failed: ${m.message}`))));
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the copy of the live read models ended (code ${code}) before it was done`)));
    });
  } finally {
    clearInterval(timer);
    await worker.terminate();
  }
  onCopy?.(total, total);
  syncPath(partial);
  renameSync(partial, target);
  syncPath(path.dirname(target));
}
