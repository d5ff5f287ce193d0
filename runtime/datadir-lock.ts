import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { privateFile, secureDataDir } from './private-files.js';

/** Another live process holds the data dir. */
export class DataDirBusy extends Error {
  constructor(
    readonly dir: string,
    readonly holderPid: number | null,
  ) {
    super(
      `${dir} is in use by another Turnout process${holderPid ? ` (pid ${holderPid})` : ''}. Without TURNOUT_NATS_URL a data dir belongs to one ` +
        'process (its webhook queue is not shared): stop that process, use another TURNOUT_DATA_DIR, or set TURNOUT_NATS_URL to run several.',
    );
    this.name = 'DataDirBusy';
  }
}

export interface DataDirLock {
  release(): void;
}

const LOCK_FILE = 'turnout.lock';
const PID_FILE = 'turnout.lock.pid';

/**
 * Claims the data dir for this process. Node has no flock, so the lock is SQLite's own: a
 * database in EXCLUSIVE locking mode keeps the file lock of its first write until the connection
 * closes, and the operating system drops it when the process dies, so a crash never leaves a
 * stale lock. An exclusively locked database cannot be read, so the holder's pid goes in a file
 * beside it, for the refusal's message only (a stale pid file decides nothing).
 */
export function lockDataDir(dir: string): DataDirLock {
  secureDataDir(dir);
  return claim(dir, LOCK_FILE, PID_FILE, (pid) => new DataDirBusy(path.resolve(dir), pid));
}

/** A `turnout rebuild --prepare` (runtime/prepare.ts) already runs on the data dir. */
export class PrepareBusy extends Error {
  constructor(
    readonly dir: string,
    readonly holderPid: number | null,
  ) {
    super(`a turnout rebuild --prepare already runs on ${dir}${holderPid ? ` (pid ${holderPid})` : ''}: wait for it to end, or stop it.`);
    this.name = 'PrepareBusy';
  }
}

const PREPARE_LOCK_FILE = 'turnout.prepare.lock';
const PREPARE_PID_FILE = 'turnout.prepare.lock.pid';

/**
 * Claims the prepared read models' files of the data dir for one prepare at a time, beside the
 * server's own lock (which a prepare never takes: the old release's server holds it meanwhile).
 * The start claims it too, for as long as it adopts or removes those files, so it never renames a
 * file a prepare is still writing.
 */
export function lockPrepare(dir: string): DataDirLock {
  return claim(dir, PREPARE_LOCK_FILE, PREPARE_PID_FILE, (pid) => new PrepareBusy(path.resolve(dir), pid));
}

function claim(dir: string, lockFile: string, pidFile: string, busy: (holderPid: number | null) => Error): DataDirLock {
  privateFile(path.join(dir, lockFile), { sqlite: true });
  const db = new Database(path.join(dir, lockFile));
  try {
    db.pragma('busy_timeout = 0');
    // The rollback journal: in WAL mode an exclusive connection would not block others' opens the same way.
    db.pragma('journal_mode = DELETE');
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL, since TEXT NOT NULL)');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('DELETE FROM holder');
    db.prepare('INSERT INTO holder (pid, since) VALUES (?, ?)').run(process.pid, new Date().toISOString());
    db.exec('COMMIT');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code?.startsWith('SQLITE_BUSY') || (err as { code?: string }).code === 'SQLITE_LOCKED') throw busy(holderPid(dir, pidFile));
    throw err;
  }
  writeFileSync(path.join(dir, pidFile), `${process.pid}\n`, { mode: 0o600 });
  return { release: () => db.close() };
}

function holderPid(dir: string, pidFile: string): number | null {
  try {
    const pid = Number(readFileSync(path.join(dir, pidFile), 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}
