import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { outOfDate } from '../projections/engine/step.js';
import { VERSIONS } from '../projections/store/sqlite-connection.js';
import { META_PREFIX } from '../projections/store/sqlite-schema.js';
import { lockPrepare, PrepareBusy } from './datadir-lock.js';
import { erasuresUnderway } from './erasure-journal.js';
import { LOG_FILE, READ_MODELS_FILE } from './read-models.js';
import { removeDatabase, replaceDatabase } from './rebuild-files.js';

/**
 * The read models a release prepares ahead of its start (`turnout rebuild --prepare`,
 * runtime/prepare.ts, decisions.md §13) lie beside the live ones in the data dir as
 * `readmodels.prepared-<fingerprint>.sqlite`: a whole read database, every projector at the
 * preparing release's version, named by the fingerprint of those versions. The release started
 * on the data dir adopts the file of its own fingerprint by renaming it over `readmodels.sqlite`
 * (adoptPrepared) and follows the log from the file's checkpoints, so it applies only what was
 * written since the prepare caught up.
 */
export interface ProjectorVersion {
  name: string;
  version: number;
}

const PREPARED = /^readmodels\.prepared-([0-9a-f]{16})\.sqlite(\.copy)?$/;

/** The fingerprint of a release's read-model versions: equal exactly when every name and version is. */
export function fingerprintOf(versions: readonly ProjectorVersion[]): string {
  const text = versions.map((v) => `${v.name}@${v.version}`).sort().join('\n');
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

export const preparedFile = (dataDir: string, fingerprint: string): string => path.join(dataDir, `readmodels.prepared-${fingerprint}.sqlite`);

/** Prepared files in the data dir; `partial`: a copy of the live read models a prepare had not finished. */
export function preparedFiles(dataDir: string): Array<{ file: string; name: string; fingerprint: string; partial: boolean }> {
  if (!existsSync(dataDir)) return [];
  return readdirSync(dataDir).flatMap((name) => {
    const m = PREPARED.exec(name);
    return m ? [{ file: path.join(dataDir, name), name, fingerprint: m[1], partial: m[2] !== undefined }] : [];
  });
}

/** What a prepared file says of itself, in a table of its own. */
export interface PreparedState {
  fingerprint: string;
  /** The read models it built from the log (the others were copied from the live file). */
  built: string[];
  /** True once the prepare caught up with the log: the file may be adopted. */
  done: boolean;
  /** The log position it reached, and the event there (a start checks its log holds that event). */
  position: bigint;
  stream: string | null;
  revision: bigint | null;
}

const STATE = `${META_PREFIX}prepared`;

export function writePreparedState(db: Database.Database, state: PreparedState): void {
  db.exec(`CREATE TABLE IF NOT EXISTS ${STATE} (id INTEGER PRIMARY KEY CHECK (id = 1), state TEXT NOT NULL)`);
  const text = JSON.stringify(state, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
  db.prepare(`INSERT INTO ${STATE} (id, state) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET state = excluded.state`).run(text);
}

export function readPreparedState(db: Database.Database): PreparedState | null {
  const exists = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(STATE);
  if (!exists) return null;
  const text = db.prepare(`SELECT state FROM ${STATE} WHERE id = 1`).pluck().get() as string | undefined;
  if (!text) return null;
  const raw = JSON.parse(text) as Omit<PreparedState, 'position' | 'revision'> & { position: string; revision: string | null };
  return { ...raw, position: BigInt(raw.position), revision: raw.revision === null ? null : BigInt(raw.revision) };
}

/** The read-model versions a read database records (none for a file that does not exist). */
export function recordedVersions(file: string): Map<string, number> {
  const versions = new Map<string, number>();
  if (!existsSync(file)) return versions;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    if (!db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(VERSIONS)) return versions;
    for (const r of db.prepare(`SELECT name, version FROM ${VERSIONS}`).all() as Array<{ name: string; version: number }>) versions.set(r.name, r.version);
    return versions;
  } finally {
    db.close();
  }
}

/** The read models of this release that the live file does not hold at their version. */
export function staleReadModels(dataDir: string, versions: readonly ProjectorVersion[]): ProjectorVersion[] {
  const live = recordedVersions(path.join(dataDir, READ_MODELS_FILE));
  return outOfDate(versions, (name) => live.get(name) ?? null);
}

/**
 * At a start on the embedded data dir, with the data dir's lock held (no other process uses its
 * read models): adopts the prepared file of this release's versions when the live read models
 * lack some of them, and removes every other prepared file, saying why. A prepare still running
 * keeps its files; the start then goes on as without one. Answers the adopted file's state.
 */
export function adoptPrepared(dataDir: string, versions: readonly ProjectorVersion[], report: (line: string) => void): PreparedState | null {
  const files = preparedFiles(dataDir);
  if (!files.length) return null;
  let lock: { release(): void };
  try {
    lock = lockPrepare(dataDir);
  } catch (err) {
    if (!(err instanceof PrepareBusy)) throw err;
    report(`read models: ${err.message} Its prepared files are left to it; this start builds what it needs from the log.`);
    return null;
  }
  try {
    const fingerprint = fingerprintOf(versions);
    // An erasure a previous run began holds values a prepared file may still have: rebuilt instead.
    const erasing = erasuresUnderway(dataDir);
    let adopted: PreparedState | null = null;
    for (const f of files) {
      const refused = erasing.length
        ? `built before the erasure of constituent ${erasing.join(', ')}, which this start finishes`
        : f.fingerprint !== fingerprint ? 'prepared by a release whose read-model versions differ from this one' : f.partial ? 'an unfinished copy' : refusal(dataDir, f.file, versions);
      if (typeof refused === 'string') {
        removeDatabase(f.file);
        report(`read models: removed ${f.name}: ${refused}`);
        continue;
      }
      replaceDatabase(f.file, path.join(dataDir, READ_MODELS_FILE));
      removeDatabase(f.file);
      adopted = refused;
      report(`read models: adopted ${f.name}, prepared for this release (built: ${refused.built.join(', ') || 'none'}), up to log position ${refused.position}; following the log from there`);
    }
    return adopted;
  } finally {
    lock.release();
  }
}

/**
 * Why a prepared file of this release's fingerprint is not adopted, or its state when it is. Its
 * WAL is checkpointed into it first, so the rename moves everything it holds.
 */
function refusal(dataDir: string, file: string, versions: readonly ProjectorVersion[]): string | PreparedState {
  let state: PreparedState | null;
  try {
    const db = new Database(file, { fileMustExist: true });
    try {
      state = readPreparedState(db);
      db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      db.close();
    }
  } catch (err) {
    return `unreadable (${(err as Error).message})`;
  }
  if (!state || state.fingerprint !== fingerprintOf(versions)) return 'not a prepared read database of this release';
  if (!state.done) return 'unfinished: its prepare stopped before it caught up with the log';
  if (staleReadModels(dataDir, versions).length === 0) return "the live read models already hold this release's versions";
  if (!logHolds(path.join(dataDir, LOG_FILE), state)) return 'prepared from another log than this data dir holds';
  return state;
}

/** Whether the log holds, at the prepared position, the event the prepare last applied. */
function logHolds(logFile: string, state: PreparedState): boolean {
  if (state.position === 0n) return true;
  if (!existsSync(logFile)) return false;
  const db = new Database(logFile, { readonly: true, fileMustExist: true });
  try {
    db.defaultSafeIntegers(true);
    const row = db.prepare('SELECT stream, revision FROM events WHERE position = ?').get(state.position) as { stream: string; revision: bigint } | undefined;
    return row !== undefined && row.stream === state.stream && row.revision === state.revision;
  } finally {
    db.close();
  }
}

/**
 * For an erasure (decisions.md §17), on the embedded data dir: removes every prepared file, each
 * built from values the erasure removes. A prepare that runs meanwhile holds its lock; it reads the
 * erasures' journal at each step, stops and removes its own file when it finds one under way, and
 * this waits up to `waitMs` for it to let go. Throws when it has not (a prepare in its last step,
 * building indexes in one transaction): the erasure is tried again.
 */
export async function discardPrepared(dataDir: string, report: (line: string) => void, waitMs = 30_000): Promise<void> {
  const until = Date.now() + waitMs;
  let lock: { release(): void } | null = null;
  while (!lock) {
    try {
      lock = lockPrepare(dataDir);
    } catch (err) {
      if (!(err instanceof PrepareBusy)) throw err;
      if (Date.now() > until) throw new Error(`${err.message} It has not stopped for the erasure within ${Math.round(waitMs / 1000)} s; the erasure is tried again.`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    for (const f of preparedFiles(dataDir)) {
      removeDatabase(f.file);
      report(`erasure: removed ${f.name}, read models prepared from values the erasure removes; prepare again once it has finished`);
    }
  } finally {
    lock.release();
  }
}
